//! OAuth for [`McpServer`](super::McpServer) as a resource server (RFC 9728, the MCP
//! authorization spec): the protected-resource metadata, `WWW-Authenticate` answers that name
//! it, and access tokens checked by a [`TokenVerifier`].
//!
//! Entry points: [`ProtectedResource`] (given to [`McpServer::with_oauth`](super::McpServer::with_oauth)),
//! [`TokenVerifier`] with [`JwtVerifier`] (JWT access tokens, keys from a JWKS) and
//! [`StaticTokenVerifier`]. `rmcp` has no resource-server side (its `auth` feature is the
//! client's), so this is written here.
//!
//! Errors never carry a token: a verifier says why a token is refused in words of its own.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// What a verifier learned from an access token it accepted.
///
/// ```
/// use hpd_agent::mcp::VerifiedToken;
///
/// let token = VerifiedToken::new().with_subject("alice").with_scopes(["tools:call"]);
/// assert!(token.has_scope("tools:call"));
/// assert_eq!(token.subject(), Some("alice"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct VerifiedToken {
    subject: Option<String>,
    client_id: Option<String>,
    scopes: Vec<String>,
    expires_at: Option<SystemTime>,
}

impl VerifiedToken {
    /// A token with no subject, client or scopes.
    ///
    /// ```
    /// assert!(hpd_agent::mcp::VerifiedToken::new().scopes().is_empty());
    /// ```
    pub fn new() -> Self {
        VerifiedToken::default()
    }

    /// The subject (`sub`): who the token speaks for.
    ///
    /// ```
    /// let token = hpd_agent::mcp::VerifiedToken::new().with_subject("alice");
    /// assert_eq!(token.subject(), Some("alice"));
    /// ```
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// The client the token was issued to (`client_id`).
    ///
    /// ```
    /// let token = hpd_agent::mcp::VerifiedToken::new().with_client_id("desktop-app");
    /// assert_eq!(token.client_id(), Some("desktop-app"));
    /// ```
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The scopes the token grants.
    ///
    /// ```
    /// let token = hpd_agent::mcp::VerifiedToken::new().with_scopes(["a", "b"]);
    /// assert_eq!(token.scopes(), ["a", "b"]);
    /// ```
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// When the token expires.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    ///
    /// let at = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    /// let token = hpd_agent::mcp::VerifiedToken::new().with_expiry(at);
    /// assert_eq!(token.expires_at(), Some(at));
    /// ```
    pub fn with_expiry(mut self, expires_at: SystemTime) -> Self {
        self.expires_at = Some(expires_at);
        self
    }

    /// The subject, when the token names one.
    ///
    /// ```
    /// assert_eq!(hpd_agent::mcp::VerifiedToken::new().subject(), None);
    /// ```
    #[must_use]
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The client the token was issued to, when it says.
    ///
    /// ```
    /// assert_eq!(hpd_agent::mcp::VerifiedToken::new().client_id(), None);
    /// ```
    #[must_use]
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The scopes it grants.
    ///
    /// ```
    /// assert!(hpd_agent::mcp::VerifiedToken::new().scopes().is_empty());
    /// ```
    #[must_use]
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// When it expires, when it says.
    ///
    /// ```
    /// assert_eq!(hpd_agent::mcp::VerifiedToken::new().expires_at(), None);
    /// ```
    #[must_use]
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires_at
    }

    /// Whether it grants `scope`.
    ///
    /// ```
    /// let token = hpd_agent::mcp::VerifiedToken::new().with_scopes(["read"]);
    /// assert!(token.has_scope("read") && !token.has_scope("write"));
    /// ```
    #[must_use]
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|granted| granted == scope)
    }
}

/// Why a verifier refused an access token. The text says why in the verifier's words and
/// never contains the token.
///
/// ```
/// use hpd_agent::mcp::TokenRejected;
///
/// let refused = TokenRejected::new("the token has expired");
/// assert_eq!(refused.to_string(), "the token has expired");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct TokenRejected {
    reason: String,
}

impl TokenRejected {
    /// A refusal with its reason (which must not quote the token).
    ///
    /// ```
    /// let refused = hpd_agent::mcp::TokenRejected::new("unknown signing key");
    /// assert_eq!(refused.reason(), "unknown signing key");
    /// ```
    pub fn new(reason: impl Into<String>) -> Self {
        TokenRejected {
            reason: reason.into(),
        }
    }

    /// Why the token was refused.
    ///
    /// ```
    /// assert_eq!(hpd_agent::mcp::TokenRejected::new("expired").reason(), "expired");
    /// ```
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Checks the access tokens of requests to an [`McpServer`](super::McpServer) protected with
/// [`McpServer::with_oauth`](super::McpServer::with_oauth).
///
/// `resource` is the server's resource URL (its endpoint URL unless
/// [`ProtectedResource::with_resource`] says otherwise): a token must have been issued for it
/// (its audience). Scopes are checked by the server afterwards, against
/// [`ProtectedResource::with_required_scopes`].
///
/// ```
/// use async_trait::async_trait;
/// use hpd_agent::mcp::{TokenRejected, TokenVerifier, VerifiedToken};
///
/// /// Accepts the tokens an introspection table knows.
/// struct Table(Vec<(String, VerifiedToken)>);
///
/// #[async_trait]
/// impl TokenVerifier for Table {
///     async fn verify(&self, token: &str, _resource: &str) -> Result<VerifiedToken, TokenRejected> {
///         self.0
///             .iter()
///             .find(|(known, _)| known == token)
///             .map(|(_, verified)| verified.clone())
///             .ok_or_else(|| TokenRejected::new("unknown token"))
///     }
/// }
/// # let _ = Table(Vec::new());
/// ```
#[async_trait]
pub trait TokenVerifier: Send + Sync + 'static {
    /// Checks `token` (the credentials of `Authorization: Bearer <token>`) for `resource`.
    ///
    /// # Errors
    ///
    /// [`TokenRejected`] for a token that is not valid for `resource` (bad signature, wrong
    /// issuer or audience, expired, unknown); the client gets 401 with
    /// `error="invalid_token"`.
    async fn verify(&self, token: &str, resource: &str) -> Result<VerifiedToken, TokenRejected>;
}

/// One fixed bearer token, granting fixed scopes: the simple case, as
/// [`McpServer::with_bearer_token`](super::McpServer::with_bearer_token) but with OAuth's metadata and
/// answers. `Debug` does not show the token.
///
/// ```
/// use hpd_agent::mcp::{StaticTokenVerifier, TokenVerifier};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let verifier = StaticTokenVerifier::new("s3cret-token").with_scopes(["tools"]);
/// let token = verifier.verify("s3cret-token", "http://127.0.0.1:1/mcp").await.unwrap();
/// assert!(token.has_scope("tools"));
/// assert!(verifier.verify("other", "http://127.0.0.1:1/mcp").await.is_err());
/// assert!(!format!("{verifier:?}").contains("s3cret"));
/// # }
/// ```
pub struct StaticTokenVerifier {
    token: String,
    scopes: Vec<String>,
}

impl fmt::Debug for StaticTokenVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticTokenVerifier")
            .field("token", &super::connection::REDACTED)
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl StaticTokenVerifier {
    /// Accepts exactly `token`.
    ///
    /// ```
    /// let verifier = hpd_agent::mcp::StaticTokenVerifier::new("t0ken");
    /// # drop(verifier);
    /// ```
    #[must_use]
    pub fn new(token: impl Into<String>) -> Self {
        StaticTokenVerifier {
            token: token.into(),
            scopes: Vec::new(),
        }
    }

    /// The scopes the token grants.
    ///
    /// ```
    /// let verifier = hpd_agent::mcp::StaticTokenVerifier::new("t0ken").with_scopes(["tools"]);
    /// # drop(verifier);
    /// ```
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

#[async_trait]
impl TokenVerifier for StaticTokenVerifier {
    async fn verify(&self, token: &str, _resource: &str) -> Result<VerifiedToken, TokenRejected> {
        if super::http_server::constant_time_eq(token, &self.token) {
            Ok(VerifiedToken::new().with_scopes(self.scopes.clone()))
        } else {
            Err(TokenRejected::new("the token is not valid"))
        }
    }
}

/// How long fetched signing keys are used before they are fetched again.
const JWKS_MAX_AGE: Duration = Duration::from_secs(300);
/// A token signed with a key the set does not have makes the verifier fetch the set again, at
/// most this often.
const JWKS_MIN_REFETCH: Duration = Duration::from_secs(10);

/// Verifies JWT access tokens (RFC 9068): the signature with a key of the issuer's JWKS, the
/// issuer (`iss`), the audience (`aud`, the server's resource URL unless
/// [`with_audience`](Self::with_audience) says otherwise) and the expiry (`exp`, with 30 seconds of
/// [`with_leeway`](Self::with_leeway) for clock skew). Scopes come from `scope` (space-separated) or `scp` (a list).
///
/// Keys are fetched from the JWKS URL on first use and again after five minutes, or when a
/// token names a key the set does not have (at most every ten seconds). Symmetric algorithms
/// (`HS*`) are refused: a JWKS carries public keys.
///
/// ```no_run
/// use hpd_agent::mcp::{JwtVerifier, McpServer, ProtectedResource};
/// use hpd_agent::{AgentBuilder, ScriptedChatClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // `no_run`: it fetches the issuer's metadata.
/// let verifier = JwtVerifier::discover("https://auth.example.com").await?;
/// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
/// let server = McpServer::new(agent)
///     .with_oauth(ProtectedResource::new("https://auth.example.com", verifier).with_required_scopes(["mcp:tools"]))
///     .serve_http("127.0.0.1:8931".parse()?)
///     .await?;
/// server.wait().await;
/// # Ok(())
/// # }
/// ```
pub struct JwtVerifier {
    issuer: String,
    jwks_uri: String,
    audience: Option<String>,
    leeway: Duration,
    http: reqwest::Client,
    keys: Mutex<Option<FetchedKeys>>,
}

struct FetchedKeys {
    set: JwkSet,
    fetched: Instant,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("jwks_uri", &self.jwks_uri)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

/// Why [`JwtVerifier::discover`] could not set a verifier up.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let error = hpd_agent::mcp::JwtVerifier::discover("http://127.0.0.1:9").await.unwrap_err();
/// assert!(error.to_string().contains("127.0.0.1:9"));
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[error("the authorization server metadata of `{issuer}` could not be read: {message}")]
pub struct DiscoveryError {
    issuer: String,
    message: String,
}

impl JwtVerifier {
    /// Tokens of `issuer`, signed with a key of the JWKS at `jwks_uri`.
    ///
    /// ```
    /// use hpd_agent::mcp::JwtVerifier;
    ///
    /// let verifier = JwtVerifier::new("https://auth.example.com", "https://auth.example.com/jwks");
    /// # drop(verifier);
    /// ```
    #[must_use]
    pub fn new(issuer: impl Into<String>, jwks_uri: impl Into<String>) -> Self {
        JwtVerifier {
            issuer: issuer.into(),
            jwks_uri: jwks_uri.into(),
            audience: None,
            leeway: Duration::from_secs(30),
            http: reqwest::Client::new(),
            keys: Mutex::new(None),
        }
    }

    /// Reads the JWKS URL from the issuer's metadata: OpenID discovery
    /// (`/.well-known/openid-configuration`), else RFC 8414
    /// (`/.well-known/oauth-authorization-server`).
    ///
    /// # Errors
    ///
    /// [`DiscoveryError`] when neither document can be fetched or names a `jwks_uri`, or
    /// names another issuer.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let verifier = hpd_agent::mcp::JwtVerifier::discover("https://auth.example.com").await?;
    /// # drop(verifier);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn discover(issuer: impl Into<String>) -> Result<Self, DiscoveryError> {
        let issuer = issuer.into();
        let base = issuer.trim_end_matches('/');
        let http = reqwest::Client::new();
        let mut last = String::from("no metadata document");
        for document in [
            format!("{base}/.well-known/openid-configuration"),
            format!("{base}/.well-known/oauth-authorization-server"),
        ] {
            let fetched = async {
                let response = http
                    .get(&document)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if !response.status().is_success() {
                    return Err(format!("{document} answered {}", response.status()));
                }
                response.json::<Value>().await.map_err(|e| e.to_string())
            }
            .await;
            match fetched {
                Ok(metadata) => {
                    if metadata["issuer"].as_str() != Some(issuer.as_str()) {
                        return Err(DiscoveryError {
                            message: format!("{document} names the issuer {}", metadata["issuer"]),
                            issuer,
                        });
                    }
                    let Some(jwks_uri) = metadata["jwks_uri"].as_str() else {
                        last = format!("{document} has no jwks_uri");
                        continue;
                    };
                    let mut verifier = JwtVerifier::new(issuer.clone(), jwks_uri);
                    verifier.http = http;
                    return Ok(verifier);
                }
                Err(message) => last = message,
            }
        }
        Err(DiscoveryError {
            issuer,
            message: last,
        })
    }

    /// The audience tokens must name, instead of the server's resource URL.
    ///
    /// ```
    /// use hpd_agent::mcp::JwtVerifier;
    ///
    /// let verifier = JwtVerifier::new("https://auth.example.com", "https://auth.example.com/jwks")
    ///     .with_audience("https://tools.example.com/mcp");
    /// # drop(verifier);
    /// ```
    #[must_use]
    pub fn with_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// Renamed to [`with_audience`](Self::with_audience).
    #[deprecated(since = "0.1.0", note = "renamed to `with_audience`")]
    pub fn audience(self, audience: impl Into<String>) -> Self {
        self.with_audience(audience)
    }

    /// How much clock skew `exp` (and `nbf`) allow; default 30 seconds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::mcp::JwtVerifier;
    ///
    /// let strict = JwtVerifier::new("https://auth.example.com", "https://auth.example.com/jwks")
    ///     .with_leeway(Duration::ZERO);
    /// # drop(strict);
    /// ```
    #[must_use]
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Renamed to [`with_leeway`](Self::with_leeway).
    #[deprecated(since = "0.1.0", note = "renamed to `with_leeway`")]
    pub fn leeway(self, leeway: Duration) -> Self {
        self.with_leeway(leeway)
    }

    async fn fetch_keys(&self) -> Result<JwkSet, TokenRejected> {
        let unavailable = |what: String| {
            tracing::warn!(target: "hpd_agent::mcp", jwks_uri = %self.jwks_uri, "{what}");
            TokenRejected::new("the signing keys are not available")
        };
        let response = self
            .http
            .get(&self.jwks_uri)
            .send()
            .await
            .map_err(|e| unavailable(format!("fetching the JWKS failed: {e}")))?;
        if !response.status().is_success() {
            return Err(unavailable(format!(
                "the JWKS answered {}",
                response.status()
            )));
        }
        response
            .json::<JwkSet>()
            .await
            .map_err(|e| unavailable(format!("the JWKS is not a key set: {e}")))
    }

    /// The key for `kid` (or the only key when the token names none), fetching the set when
    /// it is missing, old, or lacks that key.
    async fn key(&self, kid: Option<&str>) -> Result<DecodingKey, TokenRejected> {
        let mut keys = self.keys.lock().await;
        let find = |set: &JwkSet| match kid {
            Some(kid) => set.find(kid).cloned(),
            None if set.keys.len() == 1 => set.keys.first().cloned(),
            None => None,
        };
        let stale = keys
            .as_ref()
            .is_none_or(|k| k.fetched.elapsed() > JWKS_MAX_AGE);
        let missing = keys
            .as_ref()
            .is_some_and(|k| find(&k.set).is_none() && k.fetched.elapsed() > JWKS_MIN_REFETCH);
        if stale || missing {
            let set = self.fetch_keys().await?;
            *keys = Some(FetchedKeys {
                set,
                fetched: Instant::now(),
            });
        }
        let jwk = keys
            .as_ref()
            .and_then(|k| find(&k.set))
            .ok_or_else(|| TokenRejected::new("the token is signed with an unknown key"))?;
        DecodingKey::from_jwk(&jwk).map_err(|_| TokenRejected::new("the signing key is unusable"))
    }
}

/// The claims of a JWT access token that the verifier reads.
#[derive(Deserialize)]
struct AccessClaims {
    sub: Option<String>,
    client_id: Option<String>,
    scope: Option<String>,
    scp: Option<Vec<String>>,
    exp: Option<u64>,
}

#[async_trait]
impl TokenVerifier for JwtVerifier {
    async fn verify(&self, token: &str, resource: &str) -> Result<VerifiedToken, TokenRejected> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| TokenRejected::new("the token is not a JWT"))?;
        if matches!(
            header.alg,
            jsonwebtoken::Algorithm::HS256
                | jsonwebtoken::Algorithm::HS384
                | jsonwebtoken::Algorithm::HS512
        ) {
            return Err(TokenRejected::new(
                "the token is signed with a symmetric algorithm",
            ));
        }
        let key = self.key(header.kid.as_deref()).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway.as_secs();
        validation.set_issuer(&[self.issuer.as_str()]);
        validation.set_audience(&[self.audience.as_deref().unwrap_or(resource)]);
        validation.required_spec_claims = HashSet::from(["exp", "iss", "aud"].map(str::to_owned));
        let data = jsonwebtoken::decode::<AccessClaims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            TokenRejected::new(match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::InvalidAudience => "the token was issued for another resource",
                ErrorKind::InvalidIssuer => "the token was issued by another issuer",
                ErrorKind::InvalidSignature => "the token's signature is not valid",
                ErrorKind::ImmatureSignature => "the token is not valid yet",
                ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
                _ => "the token is not valid",
            })
        })?;
        let claims = data.claims;
        let scopes: Vec<String> = match (claims.scope, claims.scp) {
            (Some(scope), _) => scope.split_whitespace().map(str::to_owned).collect(),
            (None, Some(scp)) => scp,
            (None, None) => Vec::new(),
        };
        let mut verified = VerifiedToken::new().with_scopes(scopes);
        verified.subject = claims.sub;
        verified.client_id = claims.client_id;
        verified.expires_at = claims.exp.map(|exp| UNIX_EPOCH + Duration::from_secs(exp));
        Ok(verified)
    }
}

/// How [`McpServer`](super::McpServer) is protected with OAuth: the authorization servers that
/// issue its tokens, the scopes, and the verifier of access tokens.
///
/// The server then serves its protected-resource metadata (RFC 9728) at
/// `/.well-known/oauth-protected-resource` and at that path followed by the endpoint's path
/// (`/.well-known/oauth-protected-resource/mcp`), and answers a request without a valid token
/// with `401` and `WWW-Authenticate: Bearer resource_metadata="…"` (plus `scope="…"` with the
/// required scopes, and `error="invalid_token"` when a token was given), and a token without a
/// required scope with `403` and `error="insufficient_scope"`.
///
/// ```
/// use hpd_agent::mcp::{McpServer, ProtectedResource, StaticTokenVerifier};
/// use hpd_agent::{AgentBuilder, ScriptedChatClient};
///
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
/// let verifier = StaticTokenVerifier::new("a-long-random-token").with_scopes(["tools"]);
/// let server = McpServer::new(agent)
///     .with_oauth(ProtectedResource::new("https://auth.example.com", verifier).with_required_scopes(["tools"]))
///     .serve_http("127.0.0.1:0".parse()?)
///     .await?;
/// let metadata: serde_json::Value = reqwest::get(format!(
///     "http://{}/.well-known/oauth-protected-resource/mcp",
///     server.local_addr()
/// ))
/// .await?
/// .json()
/// .await?;
/// assert_eq!(metadata["resource"], server.url());
/// assert_eq!(metadata["authorization_servers"][0], "https://auth.example.com");
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
#[must_use]
pub struct ProtectedResource {
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) required_scopes: Vec<String>,
    pub(crate) resource: Option<String>,
    pub(crate) verifier: Arc<dyn TokenVerifier>,
}

impl fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl ProtectedResource {
    /// Tokens issued by `authorization_server` (its issuer URL), checked by `verifier`.
    ///
    /// ```
    /// use hpd_agent::mcp::{JwtVerifier, ProtectedResource};
    ///
    /// let issuer = "https://auth.example.com";
    /// let resource = ProtectedResource::new(issuer, JwtVerifier::new(issuer, format!("{issuer}/jwks")));
    /// # drop(resource);
    /// ```
    pub fn new(authorization_server: impl Into<String>, verifier: impl TokenVerifier) -> Self {
        ProtectedResource {
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            resource: None,
            verifier: Arc::new(verifier),
        }
    }

    /// Another authorization server whose tokens the verifier accepts.
    ///
    /// ```
    /// use hpd_agent::mcp::{ProtectedResource, StaticTokenVerifier};
    ///
    /// let resource = ProtectedResource::new("https://a.example.com", StaticTokenVerifier::new("t0ken"))
    ///     .with_authorization_server("https://b.example.com");
    /// # drop(resource);
    /// ```
    pub fn with_authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// Renamed to [`with_authorization_server`](Self::with_authorization_server).
    #[deprecated(since = "0.1.0", note = "renamed to `with_authorization_server`")]
    pub fn authorization_server(self, issuer: impl Into<String>) -> Self {
        self.with_authorization_server(issuer)
    }

    /// Scopes every request's token must grant (also listed as `scopes_supported` and named
    /// in `WWW-Authenticate`).
    ///
    /// ```
    /// use hpd_agent::mcp::{ProtectedResource, StaticTokenVerifier};
    ///
    /// let resource = ProtectedResource::new("https://auth.example.com", StaticTokenVerifier::new("t0ken"))
    ///     .with_required_scopes(["mcp:tools"]);
    /// # drop(resource);
    /// ```
    pub fn with_required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        for scope in &self.required_scopes {
            if !self.scopes_supported.contains(scope) {
                self.scopes_supported.push(scope.clone());
            }
        }
        self
    }

    /// Renamed to [`with_required_scopes`](Self::with_required_scopes).
    #[deprecated(since = "0.1.0", note = "renamed to `with_required_scopes`")]
    pub fn required_scopes<I, S>(self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.with_required_scopes(scopes)
    }

    /// Scopes to list in the metadata's `scopes_supported` besides the required ones.
    ///
    /// ```
    /// use hpd_agent::mcp::{ProtectedResource, StaticTokenVerifier};
    ///
    /// let resource = ProtectedResource::new("https://auth.example.com", StaticTokenVerifier::new("t0ken"))
    ///     .with_scopes_supported(["offline_access"]);
    /// # drop(resource);
    /// ```
    pub fn with_scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for scope in scopes {
            let scope = scope.into();
            if !self.scopes_supported.contains(&scope) {
                self.scopes_supported.push(scope);
            }
        }
        self
    }

    /// Renamed to [`with_scopes_supported`](Self::with_scopes_supported).
    #[deprecated(since = "0.1.0", note = "renamed to `with_scopes_supported`")]
    pub fn scopes_supported<I, S>(self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.with_scopes_supported(scopes)
    }

    /// The resource URL clients ask tokens for and tokens must name as audience; default the
    /// server's endpoint URL, `http://{local_addr}/mcp` (set it when the server is reached
    /// through a proxy or a public name).
    ///
    /// ```
    /// use hpd_agent::mcp::{ProtectedResource, StaticTokenVerifier};
    ///
    /// let resource = ProtectedResource::new("https://auth.example.com", StaticTokenVerifier::new("t0ken"))
    ///     .with_resource("https://tools.example.com/mcp");
    /// # drop(resource);
    /// ```
    pub fn with_resource(mut self, url: impl Into<String>) -> Self {
        self.resource = Some(url.into());
        self
    }

    /// Renamed to [`with_resource`](Self::with_resource).
    #[deprecated(since = "0.1.0", note = "renamed to `with_resource`")]
    pub fn resource(self, url: impl Into<String>) -> Self {
        self.with_resource(url)
    }
}

/// A [`ProtectedResource`] bound to a server address: what the HTTP front needs.
#[derive(Debug, Clone)]
pub(crate) struct BoundResource {
    pub(crate) config: ProtectedResource,
    /// The resource URL.
    pub(crate) resource: String,
    /// The URL of the metadata document, as `WWW-Authenticate` names it.
    pub(crate) metadata_url: String,
}

impl BoundResource {
    pub(crate) fn new(config: ProtectedResource, endpoint: &str) -> Self {
        let resource = config
            .resource
            .clone()
            .unwrap_or_else(|| endpoint.to_owned());
        let metadata_url = metadata_url(&resource);
        BoundResource {
            config,
            resource,
            metadata_url,
        }
    }

    /// The metadata document (RFC 9728).
    pub(crate) fn metadata(&self) -> Value {
        let mut metadata = json!({
            "resource": self.resource,
            "authorization_servers": self.config.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.config.scopes_supported.is_empty() {
            metadata["scopes_supported"] = json!(self.config.scopes_supported);
        }
        metadata
    }

    /// Whether `path` is one of the metadata document's paths.
    pub(crate) fn is_metadata_path(&self, path: &str) -> bool {
        const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
        let resource_path = resource_path(&self.resource);
        path == WELL_KNOWN || path == format!("{WELL_KNOWN}{resource_path}")
    }

    /// The `WWW-Authenticate` value of a refusal; `error` is `invalid_token` or
    /// `insufficient_scope` (none when no token was given).
    pub(crate) fn challenge(&self, error: Option<&str>) -> String {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !self.config.required_scopes.is_empty() {
            value.push_str(&format!(
                ", scope=\"{}\"",
                self.config.required_scopes.join(" ")
            ));
        }
        if let Some(error) = error {
            value.push_str(&format!(", error=\"{error}\""));
        }
        value
    }
}

/// The path of a URL (`/` when it has none).
fn resource_path(url: &str) -> &str {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    match after_scheme.find('/') {
        Some(index) => after_scheme[index..].trim_end_matches('/'),
        None => "",
    }
}

/// RFC 9728 §3.1: the well-known path is put between the host and the resource's path.
fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("http", resource));
    let host = rest.split('/').next().unwrap_or(rest);
    format!(
        "{scheme}://{host}/.well-known/oauth-protected-resource{}",
        resource_path(resource)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_follow_rfc_9728() {
        assert_eq!(
            metadata_url("http://127.0.0.1:8080/mcp"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("https://tools.example.com"),
            "https://tools.example.com/.well-known/oauth-protected-resource"
        );
        let bound = BoundResource::new(
            ProtectedResource::new("https://as", StaticTokenVerifier::new("t"))
                .with_required_scopes(["a", "b"]),
            "http://127.0.0.1:1/mcp",
        );
        assert!(bound.is_metadata_path("/.well-known/oauth-protected-resource/mcp"));
        assert!(bound.is_metadata_path("/.well-known/oauth-protected-resource"));
        assert!(!bound.is_metadata_path("/mcp"));
        assert_eq!(
            bound.challenge(Some("invalid_token")),
            "Bearer resource_metadata=\"http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp\", scope=\"a b\", error=\"invalid_token\""
        );
        assert_eq!(bound.metadata()["scopes_supported"], json!(["a", "b"]));
    }
}
