//! `mcp_servers`: MCP servers to connect as harnesses ([`McpServerConfig`]).

use std::collections::BTreeMap;
use std::fmt;

/// One MCP server whose tools become a harness (an entry of JSON `mcp_servers`).
///
/// A server is reached either by starting `command` with `args` (and extra `env`), speaking MCP
/// on its standard streams, or at the streamable HTTP endpoint `url` (with `headers`). The
/// harness is named `name`, collapsed behind a container unless `collapse` is `false`, and
/// offers only `functions` when given. Connecting needs `AgentBuilder::build_async` and the
/// `mcp` cargo feature.
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::McpServerConfig;
///
/// let config = AgentConfig::from_json(r#"{"McpServers": [
///     {"Name": "Files", "Command": "npx", "Args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
///      "Functions": ["read_text_file"], "TimeoutMs": 30000},
///     {"name": "Search", "url": "http://127.0.0.1:3000/mcp",
///      "headers": {"Authorization": "Bearer token"}, "collapse": false}
/// ]}"#)?;
/// assert_eq!(
///     config.mcp_servers[0],
///     McpServerConfig::stdio("Files", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/data"])
///         .with_functions(["read_text_file"])
///         .with_timeout_ms(30000)
/// );
/// assert_eq!(
///     config.mcp_servers[1],
///     McpServerConfig::http("Search", "http://127.0.0.1:3000/mcp")
///         .with_header("Authorization", "Bearer token")
///         .with_collapse(false)
/// );
///
/// let err = AgentConfig::from_json(r#"{"mcp_servers": [{"name": "X"}]}"#).unwrap_err();
/// assert_eq!(err.path(), "mcp_servers[0]");
/// assert!(err.message().starts_with("missing key 'command' or 'url' in McpServerConfig"));
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    /// The harness name (JSON `name`).
    pub name: String,
    /// How the server is reached (JSON `command`, `args`, `env` or `url`, `headers`).
    pub transport: McpTransportConfig,
    /// The container description (JSON `description`); `None` uses the server's instructions,
    /// else a text naming the server.
    pub description: Option<String>,
    /// Whether the harness is collapsed behind a container (JSON `collapse`, default `true`).
    pub collapse: bool,
    /// The tools to offer, by the server's names; `None` offers all (JSON `functions`; `[]` is
    /// rejected when parsing).
    pub functions: Option<Vec<String>>,
    /// The timeout of calls, the handshake and tool listings in milliseconds (JSON
    /// `timeout_ms`); `None` is the default of 60 s.
    pub timeout_ms: Option<u64>,
    /// OAuth 2.1 sign-in for an HTTP server behind an authorization server (JSON `auth`);
    /// `None` signs in to nothing.
    pub auth: Option<McpAuthConfig>,
    /// The roots the server gets from `roots/list` (JSON `roots`: objects with `uri` and an
    /// optional `name`); empty declares no roots capability, so the server cannot ask.
    pub roots: Vec<crate::roots::Root>,
    /// Whether the server's resources become members of the harness the model can call,
    /// `list_resources` and `read_resource`, when the server has any (JSON `resources`,
    /// default `true`); `false` is `McpHarness::without_resources`: the model sees the
    /// server's tools only, and the application still reaches resources through the client.
    pub resources: bool,
}

/// The OAuth sign-in of an HTTP MCP server from config (JSON `mcp_servers[].auth`; see
/// `McpOAuth` in `hpd_agent::mcp`). Every key is optional: `{}` registers the client
/// dynamically, asks for the scopes the server names, keeps tokens in memory and takes the
/// browser's callback on a loopback port the system chooses, printing the authorization URL
/// to stderr.
///
/// `Debug` does not show the client secret.
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::McpAuthConfig;
///
/// let config = AgentConfig::from_json(r#"{"mcp_servers": [{"name": "Tracker",
///     "url": "https://tracker.example.com/mcp",
///     "auth": {"client_id": "desktop", "scopes": ["issues:read"],
///              "token_file": "/home/me/.config/app/tracker-tokens.json", "redirect_port": 8765}}]}"#)?;
/// let auth = config.mcp_servers[0].auth.as_ref().unwrap();
/// assert_eq!(auth.client_id.as_deref(), Some("desktop"));
/// assert_eq!(auth.redirect_port, Some(8765));
/// assert_eq!(*auth, McpAuthConfig { client_id: Some("desktop".into()), scopes: vec!["issues:read".into()],
///     token_file: Some("/home/me/.config/app/tracker-tokens.json".into()), redirect_port: Some(8765),
///     ..McpAuthConfig::default() });
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct McpAuthConfig {
    /// A pre-registered client ID (JSON `client_id`); `None` registers dynamically (or uses
    /// `client_metadata_url`).
    pub client_id: Option<String>,
    /// The pre-registered client's secret (JSON `client_secret`).
    pub client_secret: Option<String>,
    /// The HTTPS URL of a client ID metadata document (JSON `client_metadata_url`).
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for (JSON `scopes`); empty asks for those the server names.
    pub scopes: Vec<String>,
    /// A file to keep tokens in between runs, written with permissions 0600 (JSON
    /// `token_file`); `None` keeps them in memory.
    pub token_file: Option<String>,
    /// The loopback port of the redirect URI `http://127.0.0.1:{port}/callback` (JSON
    /// `redirect_port`); `None` lets the system choose.
    pub redirect_port: Option<u16>,
}

impl fmt::Debug for McpAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpAuthConfig")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("token_file", &self.token_file)
            .field("redirect_port", &self.redirect_port)
            .finish()
    }
}

/// How an [`McpServerConfig`] reaches its server.
///
/// `Debug` output shows the names of `env` variables and `headers` but never their values,
/// and the `url` without its password, since they often carry credentials:
///
/// ```
/// use hpd_agent::config::McpServerConfig;
///
/// let server = McpServerConfig::http("Search", "https://user:pw-123@example.invalid/mcp")
///     .with_header("Authorization", "Bearer sk-live-123");
/// let shown = format!("{server:?}");
/// assert!(shown.contains("Authorization") && !shown.contains("sk-live-123") && !shown.contains("pw-123"));
/// ```
#[derive(Clone, PartialEq)]
pub enum McpTransportConfig {
    /// Start a process speaking MCP on stdin and stdout.
    Stdio {
        /// The program (JSON `command`).
        command: String,
        /// Its arguments (JSON `args`, default `[]`).
        args: Vec<String>,
        /// Extra environment variables (JSON `env`, default `{}`).
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint URL (JSON `url`).
        url: String,
        /// Headers sent with every request (JSON `headers`, default `{}`).
        headers: BTreeMap<String, String>,
    },
}

impl std::fmt::Debug for McpTransportConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const REDACTED: &str = "<redacted>";
        let redacted = |names: Vec<&String>| -> BTreeMap<String, &str> {
            names.into_iter().map(|n| (n.clone(), REDACTED)).collect()
        };
        match self {
            McpTransportConfig::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &redacted(env.keys().collect()))
                .finish(),
            McpTransportConfig::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", &crate::credentials::redact_url(url))
                .field("headers", &redacted(headers.keys().collect()))
                .finish(),
        }
    }
}

impl McpServerConfig {
    /// A stdio server: `command` started with `args`.
    ///
    /// ```
    /// use hpd_agent::config::{McpServerConfig, McpTransportConfig};
    ///
    /// let time = McpServerConfig::stdio("Time", "uvx", ["mcp-server-time"]);
    /// assert!(matches!(&time.transport, McpTransportConfig::Stdio { command, .. } if command == "uvx"));
    /// assert!(time.collapse); // collapsed by default
    /// ```
    #[must_use]
    pub fn stdio<I, S>(name: impl Into<String>, command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        McpServerConfig::with_transport(
            name.into(),
            McpTransportConfig::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
            },
        )
    }

    /// A streamable HTTP server at `url`.
    ///
    /// ```
    /// use hpd_agent::config::{McpServerConfig, McpTransportConfig};
    ///
    /// let search = McpServerConfig::http("Search", "http://127.0.0.1:3000/mcp");
    /// assert!(matches!(&search.transport, McpTransportConfig::Http { url, .. } if url.ends_with("/mcp")));
    /// ```
    #[must_use]
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerConfig::with_transport(
            name.into(),
            McpTransportConfig::Http {
                url: url.into(),
                headers: BTreeMap::new(),
            },
        )
    }

    fn with_transport(name: String, transport: McpTransportConfig) -> Self {
        McpServerConfig {
            name,
            transport,
            description: None,
            collapse: true,
            functions: None,
            timeout_ms: None,
            auth: None,
            roots: Vec::new(),
            resources: true,
        }
    }

    /// The roots the server gets from `roots/list`.
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::McpServerConfig;
    /// use hpd_agent::tool::Root;
    ///
    /// let config = AgentConfig::from_json(r#"{"mcp_servers": [{"name": "Files", "command": "files-server",
    ///     "roots": [{"uri": "file:///srv/project", "name": "project"}]}]}"#)?;
    /// assert_eq!(
    ///     config.mcp_servers[0],
    ///     McpServerConfig::stdio("Files", "files-server", Vec::<String>::new())
    ///         .with_roots([Root::new("file:///srv/project").with_name("project")])
    /// );
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = crate::roots::Root>) -> Self {
        self.roots = roots.into_iter().collect();
        self
    }

    /// Sets whether the server's resources are members of the harness (`false`: the model
    /// sees the server's tools only).
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::McpServerConfig;
    ///
    /// let config = AgentConfig::from_json(r#"{"mcp_servers": [{"name": "Files", "command": "files-server",
    ///     "resources": false}]}"#)?;
    /// assert!(!config.mcp_servers[0].resources);
    /// assert_eq!(
    ///     config.mcp_servers[0],
    ///     McpServerConfig::stdio("Files", "files-server", Vec::<String>::new()).with_resources(false)
    /// );
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_resources(mut self, resources: bool) -> Self {
        self.resources = resources;
        self
    }

    /// Signs in with OAuth (an HTTP server only; ignored for a stdio one).
    ///
    /// ```
    /// use hpd_agent::config::{McpAuthConfig, McpServerConfig};
    ///
    /// let tracker = McpServerConfig::http("Tracker", "https://tracker.example.com/mcp")
    ///     .with_auth(McpAuthConfig { token_file: Some("tokens.json".into()), ..McpAuthConfig::default() });
    /// assert!(tracker.auth.is_some());
    /// ```
    #[must_use]
    pub fn with_auth(mut self, auth: McpAuthConfig) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Sets the container description.
    ///
    /// ```
    /// use hpd_agent::config::McpServerConfig;
    ///
    /// let git = McpServerConfig::stdio("Git", "uvx", ["mcp-server-git"]).with_description("Git history of the repository");
    /// assert_eq!(git.description.as_deref(), Some("Git history of the repository"));
    /// ```
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets whether the harness is collapsed.
    ///
    /// ```
    /// use hpd_agent::config::McpServerConfig;
    ///
    /// let always_open = McpServerConfig::stdio("Time", "uvx", ["mcp-server-time"]).with_collapse(false);
    /// assert!(!always_open.collapse);
    /// ```
    #[must_use]
    pub fn with_collapse(mut self, collapse: bool) -> Self {
        self.collapse = collapse;
        self
    }

    /// Offers only these tools.
    ///
    /// ```
    /// use hpd_agent::config::McpServerConfig;
    ///
    /// let files = McpServerConfig::stdio("Files", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/data"])
    ///     .with_functions(["read_text_file", "list_directory"]);
    /// assert_eq!(files.functions.as_ref().map(Vec::len), Some(2));
    /// ```
    #[must_use]
    pub fn with_functions<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.functions = Some(functions.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the timeout in milliseconds.
    ///
    /// ```
    /// use hpd_agent::config::McpServerConfig;
    ///
    /// let slow = McpServerConfig::http("Slow", "http://127.0.0.1:3000/mcp").with_timeout_ms(120_000);
    /// assert_eq!(slow.timeout_ms, Some(120_000));
    /// ```
    #[must_use]
    pub fn with_timeout_ms(mut self, timeout_ms: u64) -> Self {
        self.timeout_ms = Some(timeout_ms);
        self
    }

    /// Adds an environment variable of a stdio server; ignored for an HTTP server.
    ///
    /// ```
    /// use hpd_agent::config::{McpServerConfig, McpTransportConfig};
    ///
    /// let github = McpServerConfig::stdio("GitHub", "github-mcp-server", ["stdio"]).with_env("GITHUB_TOKEN", "ghp-...");
    /// assert!(matches!(&github.transport, McpTransportConfig::Stdio { env, .. } if env.contains_key("GITHUB_TOKEN")));
    /// assert!(!format!("{github:?}").contains("ghp-")); // values are never printed
    /// ```
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransportConfig::Stdio { env, .. } = &mut self.transport {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// Adds a header of an HTTP server; ignored for a stdio server.
    ///
    /// ```
    /// use hpd_agent::config::{McpServerConfig, McpTransportConfig};
    ///
    /// let remote = McpServerConfig::http("Remote", "https://mcp.example.invalid/mcp").with_header("Authorization", "Bearer t0ken");
    /// assert!(matches!(&remote.transport, McpTransportConfig::Http { headers, .. } if headers.contains_key("Authorization")));
    /// ```
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransportConfig::Http { headers, .. } = &mut self.transport {
            headers.insert(name.into(), value.into());
        }
        self
    }
}
