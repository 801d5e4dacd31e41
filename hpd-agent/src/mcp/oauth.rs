//! OAuth 2.1 sign-in of [`McpHarness`](super::McpHarness) to servers behind an authorization
//! server, on `rmcp`'s `auth` feature.
//!
//! `rmcp` does the protocol: discovery (RFC 9728 protected-resource metadata from the
//! server's `WWW-Authenticate` or its well-known paths, then RFC 8414 and OpenID discovery with
//! the fallbacks the MCP spec names), the client's identity (pre-registered, a client ID
//! metadata document, or dynamic registration), scope selection (the challenge's `scope`,
//! else `scopes_supported`), the authorization code with PKCE, and refresh. This module adds
//! what is the application's: the browser step ([`AuthorizationHandler`], with
//! [`LoopbackRedirect`] for the desktop case), where tokens are kept ([`TokenStore`], with
//! [`MemoryTokenStore`] and [`FileTokenStore`]), and when to sign in again (a 401, or a 403
//! with `insufficient_scope`: step-up, at most [`MAX_SIGN_INS`] times in a row).
//!
//! Secrets (tokens, refresh tokens, client secrets) never show in `Debug` output or errors.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore,
    StoredCredentials, WWWAuthenticateParams,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Sign-ins in a row (for one connection or one call) before the client gives up: a server
/// that keeps refusing fresh tokens is not asked forever.
pub const MAX_SIGN_INS: usize = 2;

/// The browser step of the sign-in: show the user the authorization URL, and return the URL
/// the browser was redirected to (the callback, with `code` and `state`).
///
/// ```
/// use async_trait::async_trait;
/// use hpd_agent::mcp::AuthorizationHandler;
///
/// /// Asks the user to open the URL and paste where the browser ended up.
/// struct Paste;
///
/// #[async_trait]
/// impl AuthorizationHandler for Paste {
///     fn redirect_uri(&self) -> String {
///         "http://127.0.0.1:8765/callback".to_owned()
///     }
///
///     async fn authorize(&self, authorization_url: &str) -> Result<String, String> {
///         eprintln!("Open {authorization_url} and paste the address you are sent to:");
///         let mut line = String::new();
///         std::io::stdin().read_line(&mut line).map_err(|e| e.to_string())?;
///         Ok(line.trim().to_owned())
///     }
/// }
/// # let _ = Paste;
/// ```
#[async_trait]
pub trait AuthorizationHandler: Send + Sync + 'static {
    /// The redirect URI registered for the client (where the authorization server sends the
    /// browser back).
    fn redirect_uri(&self) -> String;

    /// Shows `authorization_url` to the user and waits for the callback.
    ///
    /// # Errors
    ///
    /// Why there is no callback (the user gave up, the browser could not be opened); the
    /// connection fails with it.
    async fn authorize(&self, authorization_url: &str) -> Result<String, String>;
}

/// What a [`TokenStore`] keeps for one server: the client's ID, the access and refresh
/// tokens, the granted scopes. Serializable (a store writes it as it likes); `Debug` shows
/// no token.
///
/// ```
/// let tokens: hpd_agent::mcp::StoredTokens = serde_json::from_str(r#"{"client_id": "app", "token_response": null}"#)?;
/// assert_eq!(tokens.client_id(), "app");
/// assert!(!tokens.has_access_token());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct StoredTokens(StoredCredentials);

impl fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // rmcp's Debug shows the client ID and scopes, and no token.
        self.0.fmt(f)
    }
}

impl StoredTokens {
    /// The client ID the tokens were issued to.
    ///
    /// ```
    /// let tokens: hpd_agent::mcp::StoredTokens = serde_json::from_str(r#"{"client_id": "app", "token_response": null}"#)?;
    /// assert_eq!(tokens.client_id(), "app");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn client_id(&self) -> &str {
        &self.0.client_id
    }

    /// The scopes granted.
    ///
    /// ```
    /// let tokens: hpd_agent::mcp::StoredTokens = serde_json::from_str(r#"{"client_id": "app", "token_response": null, "granted_scopes": ["tools"]}"#)?;
    /// assert_eq!(tokens.scopes(), ["tools"]);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn scopes(&self) -> &[String] {
        &self.0.granted_scopes
    }

    /// Whether an access token is kept (a registration alone keeps none).
    ///
    /// ```
    /// let tokens: hpd_agent::mcp::StoredTokens = serde_json::from_str(r#"{"client_id": "app", "token_response": null}"#)?;
    /// assert!(!tokens.has_access_token());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn has_access_token(&self) -> bool {
        self.0.token_response.is_some()
    }
}

/// Why a [`TokenStore`] could not load or save.
///
/// ```
/// let error = hpd_agent::mcp::TokenStoreError::new("the keychain is locked");
/// assert_eq!(error.to_string(), "the keychain is locked");
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct TokenStoreError(String);

impl TokenStoreError {
    /// An error with its message (which must not quote a token).
    ///
    /// ```
    /// let error = hpd_agent::mcp::TokenStoreError::new("disk full");
    /// # drop(error);
    /// ```
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        TokenStoreError(message.into())
    }
}

/// Where the tokens of one MCP server are kept between connections (and runs of the program).
///
/// ```
/// use std::sync::Mutex;
/// use async_trait::async_trait;
/// use hpd_agent::mcp::{StoredTokens, TokenStore, TokenStoreError};
///
/// /// Keeps the tokens in a mutex (what `MemoryTokenStore` does).
/// #[derive(Default)]
/// struct Slot(Mutex<Option<StoredTokens>>);
///
/// #[async_trait]
/// impl TokenStore for Slot {
///     async fn load(&self) -> Result<Option<StoredTokens>, TokenStoreError> {
///         Ok(self.0.lock().unwrap().clone())
///     }
///     async fn save(&self, tokens: StoredTokens) -> Result<(), TokenStoreError> {
///         *self.0.lock().unwrap() = Some(tokens);
///         Ok(())
///     }
///     async fn clear(&self) -> Result<(), TokenStoreError> {
///         *self.0.lock().unwrap() = None;
///         Ok(())
///     }
/// }
/// # let _ = Slot::default();
/// ```
#[async_trait]
pub trait TokenStore: Send + Sync + 'static {
    /// The kept tokens, if any.
    ///
    /// # Errors
    ///
    /// The store cannot be read.
    async fn load(&self) -> Result<Option<StoredTokens>, TokenStoreError>;

    /// Keeps `tokens`, replacing what was kept.
    ///
    /// # Errors
    ///
    /// The store cannot be written.
    async fn save(&self, tokens: StoredTokens) -> Result<(), TokenStoreError>;

    /// Forgets the kept tokens.
    ///
    /// # Errors
    ///
    /// The store cannot be written.
    async fn clear(&self) -> Result<(), TokenStoreError>;
}

/// Keeps tokens in memory, for the life of the process (the default).
///
/// ```
/// use hpd_agent::mcp::{MemoryTokenStore, TokenStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let store = MemoryTokenStore::new();
/// assert!(store.load().await.unwrap().is_none());
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MemoryTokenStore(tokio::sync::Mutex<Option<StoredTokens>>);

impl MemoryTokenStore {
    /// An empty store.
    ///
    /// ```
    /// let store = hpd_agent::mcp::MemoryTokenStore::new();
    /// # drop(store);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        MemoryTokenStore::default()
    }
}

#[async_trait]
impl TokenStore for MemoryTokenStore {
    async fn load(&self) -> Result<Option<StoredTokens>, TokenStoreError> {
        Ok(self.0.lock().await.clone())
    }

    async fn save(&self, tokens: StoredTokens) -> Result<(), TokenStoreError> {
        *self.0.lock().await = Some(tokens);
        Ok(())
    }

    async fn clear(&self) -> Result<(), TokenStoreError> {
        *self.0.lock().await = None;
        Ok(())
    }
}

/// Keeps tokens in a JSON file that only its owner may read and write (permissions 0600 on
/// Unix). The file is replaced as a whole (written next to it, then renamed), so a crash
/// never leaves half a file.
///
/// ```
/// use hpd_agent::mcp::{FileTokenStore, TokenStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let dir = std::env::temp_dir().join(format!("hpd-doc-tokens-{}", std::process::id()));
/// let store = FileTokenStore::new(dir.join("files-server.json"));
/// assert!(store.load().await.unwrap().is_none()); // no file yet
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
}

impl FileTokenStore {
    /// Tokens kept in the file at `path` (its folder is created when needed).
    ///
    /// ```
    /// let store = hpd_agent::mcp::FileTokenStore::new("/home/me/.config/app/mcp-tokens.json");
    /// # drop(store);
    /// ```
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore { path: path.into() }
    }

    fn error(&self, what: &str, error: &std::io::Error) -> TokenStoreError {
        TokenStoreError::new(format!("{what} {}: {error}", self.path.display()))
    }
}

#[async_trait]
impl TokenStore for FileTokenStore {
    async fn load(&self) -> Result<Option<StoredTokens>, TokenStoreError> {
        let text = match tokio::fs::read_to_string(&self.path).await {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(self.error("could not read", &error)),
        };
        serde_json::from_str(&text).map(Some).map_err(|error| {
            TokenStoreError::new(format!(
                "{} is not a token file (line {}, column {})",
                self.path.display(),
                error.line(),
                error.column()
            ))
        })
    }

    async fn save(&self, tokens: StoredTokens) -> Result<(), TokenStoreError> {
        if let Some(folder) = self.path.parent()
            && !folder.as_os_str().is_empty()
        {
            tokio::fs::create_dir_all(folder)
                .await
                .map_err(|e| self.error("could not create the folder of", &e))?;
        }
        let text = serde_json::to_vec_pretty(&tokens)
            .map_err(|e| TokenStoreError::new(format!("the tokens cannot be written: {e}")))?;
        let mut temporary = self.path.clone().into_os_string();
        temporary.push(".tmp");
        let temporary = PathBuf::from(temporary);
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options
            .open(&temporary)
            .await
            .map_err(|e| self.error("could not write", &e))?;
        // A file that existed before keeps its mode: set it.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            tokio::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o600))
                .await
                .map_err(|e| self.error("could not restrict", &e))?;
        }
        file.write_all(&text)
            .await
            .map_err(|e| self.error("could not write", &e))?;
        file.sync_all()
            .await
            .map_err(|e| self.error("could not write", &e))?;
        drop(file);
        tokio::fs::rename(&temporary, &self.path)
            .await
            .map_err(|e| self.error("could not replace", &e))
    }

    async fn clear(&self) -> Result<(), TokenStoreError> {
        match tokio::fs::remove_file(&self.path).await {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(self.error("could not remove", &error)),
        }
    }
}

/// A [`TokenStore`] as `rmcp` wants it.
struct StoreAdapter(Arc<dyn TokenStore>);

#[async_trait]
impl CredentialStore for StoreAdapter {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0
            .load()
            .await
            .map(|tokens| tokens.map(|t| t.0))
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0
            .save(StoredTokens(credentials))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0
            .clear()
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }
}

/// How the client identifies itself to the authorization server.
#[derive(Clone)]
enum ClientIdentity {
    /// Dynamic client registration (RFC 7591), when the server offers it.
    Dynamic,
    /// A client registered beforehand.
    PreRegistered {
        client_id: String,
        client_secret: Option<String>,
    },
    /// A client ID metadata document (its HTTPS URL is the client ID), falling back to
    /// dynamic registration where the server does not support them.
    MetadataDocument(String),
}

/// The OAuth sign-in of an [`McpHarness`](super::McpHarness) (see
/// [`McpHarness::with_oauth`](super::McpHarness::with_oauth)): who the client is, which scopes it asks
/// for, where tokens are kept, and the browser step.
///
/// With nothing else set, the client registers itself dynamically, asks for the scopes the
/// server names (its `WWW-Authenticate` `scope`, else its metadata's `scopes_supported`), and
/// keeps tokens in memory. `Debug` shows no client secret.
///
/// ```no_run
/// use hpd_agent::mcp::{FileTokenStore, LoopbackRedirect, McpHarness, McpOAuth};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // `no_run`: it signs in at a real server, through the user's browser.
/// let browser = LoopbackRedirect::bind(8765)
///     .await?
///     .on_authorization_url(|url| eprintln!("Sign in at {url}"));
/// let tracker = McpHarness::http("Tracker", "https://tracker.example.com/mcp")
///     .with_oauth(McpOAuth::new(browser).with_token_store(FileTokenStore::new("tracker-tokens.json")))
///     .connect()
///     .await?;
/// # drop(tracker);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
#[must_use]
pub struct McpOAuth {
    pub(crate) handler: Arc<dyn AuthorizationHandler>,
    pub(crate) store: Arc<dyn TokenStore>,
    identity: ClientIdentity,
    scopes: Vec<String>,
    client_name: String,
    /// The scopes the last sign-in asked for: a step-up asks for them and the new ones.
    requested: Arc<std::sync::Mutex<Vec<String>>>,
}

impl fmt::Debug for McpOAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let identity = match &self.identity {
            ClientIdentity::Dynamic => "dynamic registration".to_owned(),
            ClientIdentity::PreRegistered { client_id, .. } => {
                format!("pre-registered {client_id}")
            }
            ClientIdentity::MetadataDocument(url) => format!("metadata document {url}"),
        };
        f.debug_struct("McpOAuth")
            .field("client", &identity)
            .field("scopes", &self.scopes)
            .field("client_name", &self.client_name)
            .finish_non_exhaustive()
    }
}

impl McpOAuth {
    /// A sign-in whose browser step `handler` does.
    ///
    /// ```
    /// use hpd_agent::mcp::{LoopbackRedirect, McpOAuth};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let oauth = McpOAuth::new(LoopbackRedirect::bind(0).await?);
    /// # drop(oauth);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(handler: impl AuthorizationHandler) -> Self {
        McpOAuth {
            handler: Arc::new(handler),
            store: Arc::new(MemoryTokenStore::new()),
            identity: ClientIdentity::Dynamic,
            scopes: Vec::new(),
            client_name: "hpd-agent".to_owned(),
            requested: Arc::default(),
        }
    }

    /// A client registered beforehand with the authorization server (no registration then).
    ///
    /// ```
    /// use hpd_agent::mcp::{LoopbackRedirect, McpOAuth};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let oauth = McpOAuth::new(LoopbackRedirect::bind(0).await?).with_client_id("my-desktop-app");
    /// # drop(oauth);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        let client_secret = match self.identity {
            ClientIdentity::PreRegistered { client_secret, .. } => client_secret,
            _ => None,
        };
        self.identity = ClientIdentity::PreRegistered {
            client_id: client_id.into(),
            client_secret,
        };
        self
    }

    /// Renamed to [`with_client_id`](Self::with_client_id).
    #[deprecated(since = "0.1.0", note = "renamed to `with_client_id`")]
    pub fn client_id(self, client_id: impl Into<String>) -> Self {
        self.with_client_id(client_id)
    }

    /// The secret of the pre-registered client (a confidential client); set
    /// [`with_client_id`](Self::with_client_id) too.
    ///
    /// ```
    /// use hpd_agent::mcp::{LoopbackRedirect, McpOAuth};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let oauth = McpOAuth::new(LoopbackRedirect::bind(0).await?)
    ///     .with_client_id("backend")
    ///     .with_client_secret(std::env::var("MCP_CLIENT_SECRET").unwrap_or_default());
    /// assert!(!format!("{oauth:?}").contains("MCP_CLIENT_SECRET"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_client_secret(mut self, secret: impl Into<String>) -> Self {
        let client_id = match self.identity {
            ClientIdentity::PreRegistered { client_id, .. } => client_id,
            _ => String::new(),
        };
        self.identity = ClientIdentity::PreRegistered {
            client_id,
            client_secret: Some(secret.into()),
        };
        self
    }

    /// Renamed to [`with_client_secret`](Self::with_client_secret).
    #[deprecated(since = "0.1.0", note = "renamed to `with_client_secret`")]
    pub fn client_secret(self, secret: impl Into<String>) -> Self {
        self.with_client_secret(secret)
    }

    /// Identifies the client by the HTTPS URL of its client ID metadata document, where the
    /// authorization server supports them (dynamic registration elsewhere).
    ///
    /// ```
    /// use hpd_agent::mcp::{LoopbackRedirect, McpOAuth};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let oauth = McpOAuth::new(LoopbackRedirect::bind(0).await?)
    ///     .with_client_metadata_url("https://app.example.com/oauth/client.json");
    /// # drop(oauth);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.identity = ClientIdentity::MetadataDocument(url.into());
        self
    }

    /// Renamed to [`with_client_metadata_url`](Self::with_client_metadata_url).
    #[deprecated(since = "0.1.0", note = "renamed to `with_client_metadata_url`")]
    pub fn client_metadata_url(self, url: impl Into<String>) -> Self {
        self.with_client_metadata_url(url)
    }

    /// The scopes to ask for, instead of those the server names.
    ///
    /// ```
    /// use hpd_agent::mcp::{LoopbackRedirect, McpOAuth};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let oauth = McpOAuth::new(LoopbackRedirect::bind(0).await?).with_scopes(["issues:read"]);
    /// # drop(oauth);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Renamed to [`with_scopes`](Self::with_scopes).
    #[deprecated(since = "0.1.0", note = "renamed to `with_scopes`")]
    pub fn scopes<I, S>(self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.with_scopes(scopes)
    }

    /// Where tokens are kept (default: in memory).
    ///
    /// ```
    /// use hpd_agent::mcp::{FileTokenStore, LoopbackRedirect, McpOAuth};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let oauth = McpOAuth::new(LoopbackRedirect::bind(0).await?)
    ///     .with_token_store(FileTokenStore::new("tokens.json"));
    /// # drop(oauth);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_token_store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Renamed to [`with_token_store`](Self::with_token_store).
    #[deprecated(since = "0.1.0", note = "renamed to `with_token_store`")]
    pub fn token_store(self, store: impl TokenStore) -> Self {
        self.with_token_store(store)
    }

    /// The client name sent with dynamic registration (default `hpd-agent`).
    ///
    /// ```
    /// use hpd_agent::mcp::{LoopbackRedirect, McpOAuth};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let oauth = McpOAuth::new(LoopbackRedirect::bind(0).await?).with_client_name("Acme Desktop");
    /// # drop(oauth);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Renamed to [`with_client_name`](Self::with_client_name).
    #[deprecated(since = "0.1.0", note = "renamed to `with_client_name`")]
    pub fn client_name(self, name: impl Into<String>) -> Self {
        self.with_client_name(name)
    }

    /// The secrets to scrub from messages: the client secret.
    pub(crate) fn secrets(&self) -> Vec<String> {
        match &self.identity {
            ClientIdentity::PreRegistered {
                client_secret: Some(secret),
                ..
            } => vec![secret.clone()],
            _ => Vec::new(),
        }
    }

    /// An authorization manager for `url` with the kept tokens, for the transport.
    pub(crate) async fn manager(&self, url: &str) -> Result<AuthorizationManager, String> {
        let mut manager = AuthorizationManager::new(url)
            .await
            .map_err(|e| e.to_string())?;
        manager.set_credential_store(StoreAdapter(self.store.clone()));
        if let Err(error) = manager.initialize_from_store().await {
            // The server's metadata could not be read: the request goes out without a token
            // and the server's answer starts a sign-in.
            tracing::debug!(target: "hpd_agent::mcp", %error, "kept tokens not used");
        }
        Ok(manager)
    }

    /// Signs in at the authorization server of the MCP server at `url`, as its
    /// `WWW-Authenticate` `challenge` says, through the handler; the tokens go to the store.
    pub(crate) async fn sign_in(&self, url: &str, challenge: &str) -> Result<(), String> {
        let mut manager = AuthorizationManager::new(url)
            .await
            .map_err(|e| e.to_string())?;
        manager.set_credential_store(StoreAdapter(self.store.clone()));
        let resolution = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
            .map_err(|e| format!("discovery failed: {e}"))?;
        manager.set_metadata(resolution.metadata);
        let mut request = AuthorizationRequest::new(self.handler.redirect_uri())
            .with_challenge(challenge)
            .with_client_name(self.client_name.clone());
        // A new sign-in asks for what the last one did, the configured scopes and what the
        // challenge names (SEP-2350); with none of them, rmcp picks (`scopes_supported`).
        let challenged = reqwest::Url::parse(url)
            .ok()
            .and_then(|base| WWWAuthenticateParams::parse(challenge, &base).scope)
            .unwrap_or_default();
        let mut scopes: Vec<String> = self
            .requested
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        for scope in self
            .scopes
            .iter()
            .cloned()
            .chain(challenged.split_whitespace().map(str::to_owned))
        {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        if !scopes.is_empty() {
            request = request.with_scopes(scopes);
        }
        match &self.identity {
            ClientIdentity::Dynamic => {}
            ClientIdentity::PreRegistered {
                client_id,
                client_secret,
            } => {
                request = request.with_preregistered_client(client_id.clone());
                if let Some(secret) = client_secret {
                    request = request.with_client_secret(secret.clone());
                }
            }
            ClientIdentity::MetadataDocument(url) => {
                request = request.with_client_metadata_url(url.clone());
            }
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| format!("the authorization could not start: {e}"))?;
        if let Ok(asked) = reqwest::Url::parse(session.get_authorization_url())
            && let Some((_, scope)) = asked.query_pairs().find(|(key, _)| key == "scope")
        {
            *self
                .requested
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) =
                scope.split_whitespace().map(str::to_owned).collect();
        }
        let callback = self
            .handler
            .authorize(session.get_authorization_url())
            .await
            .map_err(|e| format!("the authorization was not completed: {e}"))?;
        session
            .handle_callback_url(&callback)
            .await
            .map_err(|e| format!("the authorization code was not exchanged: {e}"))?;
        Ok(())
    }
}

/// The desktop case of the browser step: a loopback HTTP listener that is the redirect URI
/// (`http://127.0.0.1:{port}/callback`) and takes the callback from the browser. What to do
/// with the authorization URL (open a browser, print it) is given with
/// [`on_authorization_url`](Self::on_authorization_url); by default it is printed to stderr.
///
/// ```
/// use hpd_agent::mcp::{AuthorizationHandler, LoopbackRedirect};
///
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let redirect = LoopbackRedirect::bind(0).await?;
/// let uri = redirect.redirect_uri();
/// assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
/// // Play the browser: follow the redirect to the callback.
/// let browser = tokio::spawn({
///     let uri = uri.clone();
///     async move { reqwest::get(format!("{uri}?code=abc&state=xyz")).await }
/// });
/// let callback = redirect.authorize("https://auth.example.com/authorize?...").await?;
/// assert_eq!(callback, format!("{uri}?code=abc&state=xyz"));
/// assert!(browser.await??.status().is_success());
/// # Ok(())
/// # }
/// ```
pub struct LoopbackRedirect {
    /// Bound at once (so the redirect URI is known), used from the runtime when a sign-in
    /// waits for its callback; one sign-in at a time.
    listener: std::net::TcpListener,
    waiting: tokio::sync::Mutex<()>,
    port: u16,
    show: Arc<dyn Fn(&str) + Send + Sync>,
}

impl fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Listens on `127.0.0.1:port` (0: a port the system chooses).
    ///
    /// # Errors
    ///
    /// The port cannot be bound.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let redirect = hpd_agent::mcp::LoopbackRedirect::bind(0).await?;
    /// # drop(redirect);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn bind(port: u16) -> std::io::Result<Self> {
        Self::bind_now(port)
    }

    /// [`bind`](Self::bind), outside a runtime (for configurations built synchronously).
    ///
    /// # Errors
    ///
    /// The port cannot be bound.
    ///
    /// ```
    /// let redirect = hpd_agent::mcp::LoopbackRedirect::bind_now(0)?;
    /// # drop(redirect);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind_now(port: u16) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        Ok(LoopbackRedirect {
            listener,
            waiting: tokio::sync::Mutex::new(()),
            port,
            show: Arc::new(|url| eprintln!("Open this address to sign in: {url}")),
        })
    }

    /// What to do with the authorization URL: open the user's browser on it, show it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let redirect = hpd_agent::mcp::LoopbackRedirect::bind(0)
    ///     .await?
    ///     .on_authorization_url(|url| println!("Sign in: {url}"));
    /// # drop(redirect);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn on_authorization_url(mut self, show: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.show = Arc::new(show);
        self
    }
}

#[async_trait]
impl AuthorizationHandler for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    async fn authorize(&self, authorization_url: &str) -> Result<String, String> {
        let _one_at_a_time = self.waiting.lock().await;
        let listener = self
            .listener
            .try_clone()
            .and_then(tokio::net::TcpListener::from_std)
            .map_err(|e| format!("the loopback redirect cannot listen: {e}"))?;
        (self.show)(authorization_url);
        // Requests that are not the callback (a browser's favicon) are answered 404.
        loop {
            let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
            let mut request = Vec::new();
            let mut buffer = [0u8; 2048];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
                let read = stream.read(&mut buffer).await.map_err(|e| e.to_string())?;
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..read]);
            }
            let head = String::from_utf8_lossy(&request);
            let target = head
                .lines()
                .next()
                .and_then(|line| line.split_whitespace().nth(1))
                .unwrap_or("");
            if target.starts_with("/callback") {
                let page = "<!doctype html><title>Signed in</title><p>You are signed in; you can close this window.";
                let _ = stream
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                            page.len()
                        )
                        .as_bytes(),
                    )
                    .await;
                return Ok(format!("http://127.0.0.1:{}{target}", self.port));
            }
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
        }
    }
}
