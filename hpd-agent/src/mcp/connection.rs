//! One live connection to an MCP server: start or reach it, list its tools, call them.
//!
//! This is the part of the MCP client that talks to `rmcp`. It knows nothing about harnesses:
//! [`Endpoint`] says how to reach a server, [`Connection`] is one session with it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    CustomRequest, CustomResult, Implementation, ProtocolVersion, ServerPeerInfo, ServerResult,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt as _, NotificationContext, RequestContext,
    RunningService, ServiceError,
};
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt as _};

use super::answering::Answering;
use crate::chat::ToolAnnotations;
use crate::tool::AskError;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt as _, BufReader};

use super::McpError;
use super::http_client::{EVENT_STREAM_WAIT, EventStreamGate, GatedHttpClient, RetryingHttpClient};
use crate::providers::retry::RetryPolicy;

/// How many lines of a server's stderr are kept for error messages.
const STDERR_TAIL_LINES: usize = 5;

/// Header names the streamable HTTP transport sets itself.
const RESERVED_HEADERS: [&str; 4] = [
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// How to reach an MCP server; a restart reconnects through the same endpoint.
///
/// `Debug` shows environment variable and header names but never their values, and a URL
/// without its password.
#[derive(Clone)]
pub(crate) enum Endpoint {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        headers: Vec<(String, String)>,
        /// The OAuth sign-in, when the server is behind an authorization server.
        oauth: Option<super::McpOAuth>,
    },
}

/// What stands in for a secret in `Debug` output and scrubbed messages.
pub(crate) const REDACTED: &str = "<redacted>";

/// Secrets shorter than this are not scrubbed from what a server writes (they would match
/// ordinary text); `Debug` output hides every value whatever its length.
pub(crate) const MIN_SCRUBBED_LEN: usize = 8;

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |names: Vec<&String>| -> Vec<(String, &str)> {
            names.into_iter().map(|n| (n.clone(), REDACTED)).collect()
        };
        match self {
            Endpoint::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &redacted(env.keys().collect()))
                .finish(),
            Endpoint::Http {
                url,
                headers,
                oauth,
            } => f
                .debug_struct("Http")
                .field("url", &crate::credentials::redact_url(url))
                .field(
                    "headers",
                    &redacted(headers.iter().map(|(n, _)| n).collect()),
                )
                .field("oauth", oauth)
                .finish(),
        }
    }
}

impl Endpoint {
    /// The values that must not show in messages: environment variable and header values
    /// (and the last word of each header value, the token of `Bearer <token>`), and a URL's
    /// password; only those of at least [`MIN_SCRUBBED_LEN`] bytes.
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = match self {
            Endpoint::Stdio { env, .. } => env.values().cloned().collect(),
            Endpoint::Http {
                url,
                headers,
                oauth,
            } => {
                let mut values: Vec<String> = Vec::new();
                values.extend(oauth.iter().flat_map(super::McpOAuth::secrets));
                for (_, value) in headers {
                    values.push(value.clone());
                    if let Some(word) = value.split_whitespace().last() {
                        values.push(word.to_owned());
                    }
                }
                values.extend(crate::credentials::url_password(url).map(str::to_owned));
                values
            }
        };
        secrets.retain(|s| s.len() >= MIN_SCRUBBED_LEN);
        // Longest first, so a value is replaced before a part of it.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        secrets
    }

    /// Checks what can be checked before connecting: a non-empty command or an `http(s)`
    /// URL, and headers that are valid and not set by the transport itself.
    pub(crate) fn validate(&self, server: &str) -> Result<(), McpError> {
        let invalid = |message: String| McpError::Invalid {
            server: server.to_owned(),
            message,
        };
        match self {
            Endpoint::Stdio { command, .. } => {
                if command.trim().is_empty() {
                    return Err(invalid("the command is empty".to_owned()));
                }
            }
            Endpoint::Http { url, headers, .. } => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(invalid(format!(
                        "the URL `{url}` does not start with http:// or https://"
                    )));
                }
                header_map(headers).map_err(invalid)?;
            }
        }
        Ok(())
    }

    /// How the endpoint is shown in messages: the command line or the URL.
    pub(crate) fn describe(&self) -> String {
        match self {
            Endpoint::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Endpoint::Http { url, .. } => crate::credentials::redact_url(url),
        }
    }
}

/// `text` with every secret replaced by [`REDACTED`].
pub(crate) fn scrub_secrets(text: String, secrets: &[String]) -> String {
    let mut text = text;
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
    }
    text
}

/// The headers as the HTTP transport wants them.
fn header_map(
    headers: &[(String, String)],
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, String> {
    let mut map = HashMap::new();
    for (name, value) in headers {
        let header_name = http::HeaderName::try_from(name.as_str())
            .map_err(|_| format!("`{name}` is not a valid HTTP header name"))?;
        if RESERVED_HEADERS.contains(&header_name.as_str()) {
            return Err(format!(
                "the header `{name}` is set by the MCP transport and cannot be given"
            ));
        }
        let header_value = http::HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("the value of the header `{name}` is not a valid header value"))?;
        map.insert(header_name, header_value);
    }
    Ok(map)
}

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RemoteTool {
    /// The server's name for it.
    pub(crate) name: String,
    /// Its description (empty when the server gives none).
    pub(crate) description: String,
    /// Its input schema as the server sent it (a JSON object when the server follows the
    /// protocol; anything, or `null` when missing, from a lenient listing).
    pub(crate) input_schema: Value,
    /// Its `outputSchema`, when it lists one.
    pub(crate) output_schema: Option<Value>,
    /// The hints of its `annotations` (empty when it lists none).
    pub(crate) annotations: ToolAnnotations,
}

/// Why a call got no result from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallFailure {
    /// The connection is gone: the process exited or the HTTP session ended.
    Closed(String),
    /// No answer within the timeout.
    TimedOut(Duration),
    /// The server answered with a JSON-RPC error or something that is not a call result.
    Protocol(String),
    /// The server asked for input in an `input_required` round (2026-07-28), and this client
    /// could not give it: the server is not at fault.
    Unanswered {
        /// `sampling`, `elicitation` or `roots`.
        what: &'static str,
        /// Why there is no answer.
        error: AskError,
    },
}

/// How many `input_required` rounds a call may take (as `rmcp`'s own helper allows).
const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// The saved form of an `input_required` round whose question a handler deferred: answered
/// when the call goes on (see [`Answering::answer_input`]).
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedRound {
    /// The server's tool the round belongs to.
    tool: String,
    /// The server's `requestState`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    /// What the round asks for, by key.
    inputs: rmcp::model::InputRequests,
}

/// The pause after an `input_required` round that asked for nothing but carried a request
/// state (the server is still working): 50 ms, doubling, at most 250 ms, as `rmcp`'s helper
/// waits.
fn state_only_pause(rounds: usize) -> Duration {
    Duration::from_millis((50u64 << rounds.min(3)).min(250))
}

impl SavedRound {
    /// The round of an `input_required` result for the tool or prompt `name`; an error text
    /// for a result that asks for nothing and carries no state (it could never end).
    fn of(name: &str, result: rmcp::model::InputRequiredResult) -> Result<SavedRound, String> {
        let inputs = result.input_requests.unwrap_or_default();
        if inputs.is_empty() && result.request_state.is_none() {
            return Err(
                "the server's input_required result asks for nothing and has no request state"
                    .to_owned(),
            );
        }
        Ok(SavedRound {
            tool: name.to_owned(),
            state: result.request_state,
            inputs,
        })
    }
}

/// How many `input_required` rounds a request took, and how many in a row asked for nothing.
#[derive(Default)]
struct Rounds {
    taken: usize,
    state_only: usize,
}

impl Rounds {
    /// Counts `round` before it is answered: an error text past [`MAX_ROUNDS`] (`what` is what
    /// the server never gave), and the pause of a round that asks for nothing.
    async fn next(&mut self, round: &SavedRound, what: &str) -> Result<(), String> {
        self.taken += 1;
        if self.taken > MAX_ROUNDS {
            return Err(format!(
                "the server asked for input {MAX_ROUNDS} times without giving the {what}"
            ));
        }
        if round.inputs.is_empty() {
            tokio::time::sleep(state_only_pause(self.state_only)).await;
            self.state_only += 1;
        } else {
            self.state_only = 0;
        }
        Ok(())
    }
}

/// The client side of one session: answers the server's notifications and requests.
struct ClientState {
    /// Set by `notifications/tools/list_changed`; the owner re-lists and clears it.
    tools_changed: Arc<AtomicBool>,
    server: String,
    /// How the server's sampling, elicitation and roots requests are answered.
    answering: Arc<Answering>,
}

/// An accepted form gets the schema's `default` of every property the answer left out
/// (SEP-1034: the user saw the defaults pre-filled and kept them).
fn fill_defaults(request: &crate::tool::Elicitation, answer: &mut crate::tool::ElicitationAnswer) {
    let crate::tool::ElicitationKind::Form { schema } = &request.kind else {
        return;
    };
    if answer.action != crate::tool::ElicitAction::Accept {
        return;
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let content = answer.content.get_or_insert_with(Map::new);
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

/// An ask that got no answer, as the JSON-RPC error the server gets.
fn ask_error(error: AskError) -> ErrorData {
    match error {
        AskError::InvalidAnswer(_) => ErrorData::invalid_params(error.to_string(), None),
        _ => ErrorData::internal_error(error.to_string(), None),
    }
}

// Sampling and roots are deprecated in rmcp (SEP-2577); the revisions this client speaks have
// them.
#[allow(deprecated)]
impl ClientHandler for ClientState {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(target: "hpd_agent::mcp", server = %self.server, "tool list changed");
        self.tools_changed.store(true, Ordering::SeqCst);
    }

    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, ErrorData> {
        let request = super::asking::sampling_request(&params).map_err(|message| {
            ErrorData::invalid_params(
                format!("the sampling request cannot be answered: {message}"),
                None,
            )
        })?;
        tracing::debug!(target: "hpd_agent::mcp", server = %self.server, "sampling request");
        let reply = self
            .answering
            .sample(&self.server, request, None)
            .await
            .map_err(ask_error)?;
        Ok(super::asking::sampling_result(reply))
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, ErrorData> {
        let request = super::asking::elicitation(&request).map_err(|message| {
            ErrorData::invalid_params(
                format!("the elicitation cannot be answered: {message}"),
                None,
            )
        })?;
        tracing::debug!(target: "hpd_agent::mcp", server = %self.server, "elicitation request");
        let mut answer = self
            .answering
            .elicit(request.clone(), None)
            .await
            .map_err(|error| match error {
                // A request of the session revisions waits for its answer while the call runs.
                AskError::Deferred => ErrorData::internal_error(
                    "the client's elicitation handler deferred the question (its user answers later), but a request of this protocol revision must be answered while the call runs; only a 2026-07-28 input_required round can wait for a later answer",
                    None,
                ),
                error => ask_error(error),
            })?;
        fill_defaults(&request, &mut answer);
        crate::ask::check_answer(&request, &answer).map_err(ask_error)?;
        Ok(super::asking::elicit_result(answer))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        let roots = self.answering.roots().map_err(ask_error)?;
        Ok(super::asking::roots_result(&roots))
    }

    /// The `initialize` request names the newest revision that has that handshake
    /// (`rmcp`'s default is its newest revision, 2026-07-28, which has none, so servers that
    /// check the handshake's version refuse it). It declares sampling and elicitation (form
    /// and URL), which the calling agent's handlers answer, and roots when the harness has
    /// some.
    fn get_info(&self) -> ClientConfig {
        use rmcp::model::{
            ElicitationCapability, FormElicitationCapability, RootsCapabilities,
            SamplingCapability, UrlElicitationCapability,
        };
        let mut capabilities = ClientCapabilities::default();
        capabilities.sampling = Some(SamplingCapability::default());
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new())
                .with_url(UrlElicitationCapability::new()),
        );
        if self.answering.settings.roots.is_some() {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("hpd-agent", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// One live session with an MCP server. Dropping it ends the session, and for a stdio
/// server the child process (its stdin is closed, then it is terminated if it lingers).
pub(crate) struct Connection {
    service: RunningService<RoleClient, ClientState>,
    /// The endpoint URL and the OAuth sign-in, for a step-up during a call.
    oauth: Option<(String, super::McpOAuth)>,
    server: String,
    stderr_tail: Arc<StderrTail>,
    tools_changed: Arc<AtomicBool>,
    answering: Arc<Answering>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Starts (stdio) or reaches (HTTP) the server and runs the `initialize` handshake,
    /// waiting at most `timeout` for it.
    pub(crate) async fn connect(
        server: &str,
        endpoint: &Endpoint,
        timeout: Duration,
        answering: Arc<Answering>,
    ) -> Result<Connection, McpError> {
        endpoint.validate(server)?;
        let tools_changed = Arc::new(AtomicBool::new(false));
        let state = ClientState {
            tools_changed: tools_changed.clone(),
            server: server.to_owned(),
            answering: answering.clone(),
        };
        let stderr_tail = Arc::new(StderrTail::new(endpoint.secrets()));
        let event_stream = EventStreamGate::default();
        let handshake = match endpoint {
            Endpoint::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).envs(env).kill_on_drop(true);
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|source| McpError::Spawn {
                        server: server.to_owned(),
                        command: endpoint.describe(),
                        source,
                    })?;
                if let Some(stderr) = stderr {
                    tokio::spawn(forward_stderr(
                        server.to_owned(),
                        stderr,
                        stderr_tail.clone(),
                    ));
                }
                tokio::time::timeout(timeout, state.serve(transport)).await
            }
            Endpoint::Http {
                url,
                headers,
                oauth,
            } => {
                stderr_tail.finish();
                let headers = header_map(headers).map_err(|message| McpError::Invalid {
                    server: server.to_owned(),
                    message,
                })?;
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers);
                match oauth {
                    None => {
                        // Requests whose pooled connection the server closed before answering
                        // are sent again on a fresh one (rmcp retries none).
                        let client = RetryingHttpClient::new(server, RetryPolicy::default())
                            .map_err(|message| McpError::Invalid {
                                server: server.to_owned(),
                                message,
                            })?;
                        let client = GatedHttpClient::new(client, event_stream.clone());
                        connect_http(
                            state,
                            || {
                                StreamableHttpClientTransport::with_client(
                                    client.clone(),
                                    config.clone(),
                                )
                            },
                            timeout,
                            &endpoint.secrets(),
                        )
                        .await
                    }
                    Some(oauth) => {
                        connect_with_oauth(
                            server,
                            (url, oauth),
                            state,
                            config,
                            timeout,
                            endpoint,
                            &event_stream,
                        )
                        .await?
                    }
                }
            }
        };
        let service = match handshake {
            Ok(Ok(service)) => {
                // A server may send its own requests on the session's event stream as soon as
                // the first call reaches it; that stream opens in the background.
                if !event_stream.settled(EVENT_STREAM_WAIT.min(timeout)).await {
                    tracing::debug!(target: "hpd_agent::mcp", server, "the session's event stream did not open within {EVENT_STREAM_WAIT:?}; going on without waiting for it");
                }
                service
            }
            Ok(Err(error)) => {
                return Err(McpError::Handshake {
                    server: server.to_owned(),
                    message: stderr_tail.quote(error.to_string()).await,
                });
            }
            Err(_) => {
                return Err(McpError::Timeout {
                    server: server.to_owned(),
                    what: "the initialize request".to_owned(),
                    timeout,
                });
            }
        };
        tracing::debug!(target: "hpd_agent::mcp", server, endpoint = %endpoint.describe(), "connected");
        let oauth = match endpoint {
            Endpoint::Http {
                url,
                oauth: Some(oauth),
                ..
            } => Some((url.clone(), oauth.clone())),
            _ => None,
        };
        Ok(Connection {
            service,
            oauth,
            server: server.to_owned(),
            stderr_tail,
            tools_changed,
            answering,
        })
    }

    /// What the server said about itself in the handshake.
    pub(crate) fn server_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.service.peer().peer_info()
    }

    /// The server's `instructions`, when it gave any that are not blank.
    pub(crate) fn instructions(&self) -> Option<String> {
        self.server_info()
            .and_then(|info| info.instructions.clone())
            .filter(|text| !text.trim().is_empty())
    }

    /// Whether `notifications/tools/list_changed` arrived since the last call of this method.
    pub(crate) fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::SeqCst)
    }

    /// Whether the session is over (the process exited, the transport closed).
    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// Lists every tool (all pages), waiting at most `timeout`.
    ///
    /// When the typed listing fails because an entry does not have the protocol's shape (a
    /// tool whose `inputSchema` is no object, a name that is no string), the list is read
    /// again entry by entry: such entries are left out (with a warning) and the rest is used.
    pub(crate) async fn list_tools(&self, timeout: Duration) -> Result<Vec<RemoteTool>, McpError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut sign_ins = 0;
        let listed = loop {
            let listed =
                tokio::time::timeout_at(deadline, self.service.peer().list_all_tools()).await;
            if let Ok(Err(error)) = &listed
                && let Ok(true) = self.sign_in_again(error, &mut sign_ins).await
            {
                continue;
            }
            break listed;
        };
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(ServiceError::UnexpectedResponse)) => {
                return self.list_tools_leniently(timeout).await;
            }
            Ok(Err(error)) => {
                return Err(McpError::ListTools {
                    server: self.server.clone(),
                    message: self.stderr_tail.quote(describe_service_error(&error)).await,
                });
            }
            Err(_) => return Err(self.list_timeout(timeout)),
        };
        Ok(tools
            .into_iter()
            .map(|tool| RemoteTool {
                name: tool.name.to_string(),
                description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*tool.input_schema).clone()),
                output_schema: tool
                    .output_schema
                    .map(|schema| Value::Object((*schema).clone())),
                annotations: tool.annotations.map_or_else(ToolAnnotations::new, |a| {
                    ToolAnnotations {
                        read_only: a.read_only_hint,
                        destructive: a.destructive_hint,
                        idempotent: a.idempotent_hint,
                        open_world: a.open_world_hint,
                    }
                }),
            })
            .collect())
    }

    fn list_timeout(&self, timeout: Duration) -> McpError {
        McpError::Timeout {
            server: self.server.clone(),
            what: "tools/list".to_owned(),
            timeout,
        }
    }

    /// `tools/list` read as plain JSON, page by page, keeping the entries that have a string
    /// `name`; the schema is checked later, where the tools are made.
    async fn list_tools_leniently(&self, timeout: Duration) -> Result<Vec<RemoteTool>, McpError> {
        /// More pages than any real server sends: a server that keeps returning cursors is
        /// stopped here.
        const MAX_PAGES: usize = 1000;
        let deadline = tokio::time::Instant::now() + timeout;
        let failed = |message: String| McpError::ListTools {
            server: self.server.clone(),
            message,
        };
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.take().map(|c| serde_json::json!({ "cursor": c }));
            let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", params));
            let answer =
                tokio::time::timeout_at(deadline, self.service.peer().send_request(request)).await;
            let value = match answer {
                Err(_) => return Err(self.list_timeout(timeout)),
                Ok(Err(error)) => {
                    let message = self.stderr_tail.quote(describe_service_error(&error)).await;
                    return Err(failed(message));
                }
                Ok(Ok(ServerResult::CustomResult(CustomResult(value)))) => value,
                Ok(Ok(other)) => serde_json::to_value(&other).map_err(|e| failed(e.to_string()))?,
            };
            let Some(entries) = value.get("tools").and_then(Value::as_array) else {
                return Err(failed("the answer's `tools` is not a list".to_owned()));
            };
            for entry in entries {
                let Some(name) = entry.get("name").and_then(Value::as_str) else {
                    tracing::warn!(target: "hpd_agent::mcp", server = %self.server, "tool left out: its name is not a string");
                    continue;
                };
                tools.push(RemoteTool {
                    name: name.to_owned(),
                    description: entry
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    input_schema: entry.get("inputSchema").cloned().unwrap_or(Value::Null),
                    output_schema: entry.get("outputSchema").filter(|s| s.is_object()).cloned(),
                    // A hint that is not a boolean is not said.
                    annotations: entry
                        .get("annotations")
                        .map_or_else(ToolAnnotations::new, |a| {
                            let hint = |key: &str| a.get(key).and_then(Value::as_bool);
                            ToolAnnotations {
                                read_only: hint("readOnlyHint"),
                                destructive: hint("destructiveHint"),
                                idempotent: hint("idempotentHint"),
                                open_world: hint("openWorldHint"),
                            }
                        }),
                });
            }
            match value.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => return Ok(tools),
            }
        }
        Err(failed(format!(
            "the server sent more than {MAX_PAGES} pages of tools"
        )))
    }

    /// Calls the server's tool `name` with `arguments`, waiting at most `timeout`. A call
    /// that is dropped or times out is cancelled on the server (`notifications/cancelled`).
    /// While it runs, the server's sampling and elicitation requests go to `asker` (the
    /// calling agent's handlers); `input_required` results are answered the same way and the
    /// call sent again with the answers and the server's request state, at most
    /// [`MAX_ROUNDS`] times. A question of such a round that the handler defers pauses the
    /// calling run (the round is saved with it), and a call that goes on after the answer
    /// answers the saved round first.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
        asker: Option<Arc<dyn crate::tool::Asker>>,
    ) -> Result<CallToolResult, CallFailure> {
        let _caller = self.answering.enter(asker.clone());
        use tracing::Instrument as _;
        let span = crate::telemetry::mcp_client_span(name, &self.server);
        #[cfg_attr(not(feature = "otel"), allow(unused_mut))]
        let mut params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        #[cfg(feature = "otel")]
        {
            let mut meta = Map::new();
            crate::otel::inject(&span, &mut meta);
            if !meta.is_empty() {
                params.meta = Some(rmcp::model::RequestMetaObject(rmcp::model::MetaObject(
                    meta,
                )));
            }
        }
        let outcome = self
            .call_with(params, timeout, asker.as_ref())
            .instrument(span.clone())
            .await;
        crate::telemetry::record_mcp_call(
            &span,
            match &outcome {
                Ok(result) if result.is_error == Some(true) => {
                    Some(("tool_error", "the tool call failed"))
                }
                Ok(_) => None,
                Err(CallFailure::Closed(_)) => Some(("closed", "the connection is closed")),
                Err(CallFailure::TimedOut(_)) => Some(("timeout", "the call timed out")),
                Err(CallFailure::Protocol(_)) => {
                    Some(("protocol", "the server answered with an error"))
                }
                Err(CallFailure::Unanswered { .. }) => Some((
                    "unanswered",
                    "the client could not answer the server's question",
                )),
            },
        );
        outcome
    }

    /// [`call`](Self::call) with its request built: sends it, answers `input_required`
    /// rounds and sends it again, until the server gives the result.
    async fn call_with(
        &self,
        mut params: CallToolRequestParams,
        timeout: Duration,
        asker: Option<&Arc<dyn crate::tool::Asker>>,
    ) -> Result<CallToolResult, CallFailure> {
        use rmcp::model::CallToolResponse;
        if self.is_closed() {
            let message = "the connection is closed".to_owned();
            return Err(CallFailure::Closed(self.stderr_tail.quote(message).await));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let mut sign_ins = 0;
        let mut rounds = Rounds::default();
        // A call that goes on after a deferred question answers its saved round first.
        let mut round = asker
            .and_then(|asker| asker.pause())
            .and_then(crate::tool::CallPause::take_round)
            .and_then(|saved| serde_json::from_value::<SavedRound>(saved).ok())
            .filter(|saved| saved.tool == params.name);
        loop {
            if let Some(saved) = round.take() {
                rounds
                    .next(&saved, "result")
                    .await
                    .map_err(CallFailure::Protocol)?;
                let responses = tokio::time::timeout_at(deadline, self.answer_round(&saved, asker))
                    .await
                    .map_err(|_| CallFailure::TimedOut(timeout))??;
                params.input_responses = (!responses.is_empty()).then_some(responses);
                params.request_state = saved.state;
            }
            let answer =
                tokio::time::timeout_at(deadline, self.service.call_tool_once(params.clone()))
                    .await;
            let error = match answer {
                Ok(Ok(CallToolResponse::Complete(result))) => return Ok(result),
                Ok(Ok(CallToolResponse::InputRequired(result))) => {
                    round =
                        Some(SavedRound::of(&params.name, result).map_err(CallFailure::Protocol)?);
                    continue;
                }
                Ok(Ok(_)) => {
                    return Err(CallFailure::Protocol(
                        "the server answered with a task, which this client did not ask for"
                            .to_owned(),
                    ));
                }
                Ok(Err(error)) => error,
                Err(_) => return Err(CallFailure::TimedOut(timeout)),
            };
            match self.sign_in_again(&error, &mut sign_ins).await {
                Ok(true) => continue,
                Err(message) => return Err(CallFailure::Protocol(message)),
                Ok(false) => {}
            }
            return Err(match error {
                ServiceError::McpError(error) => CallFailure::Protocol(format!(
                    "{} (JSON-RPC error {})",
                    error.message, error.code.0
                )),
                ServiceError::UnexpectedResponse => {
                    CallFailure::Protocol("the answer is not a tool call result".to_owned())
                }
                error => CallFailure::Closed(
                    self.stderr_tail.quote(describe_service_error(&error)).await,
                ),
            });
        }
    }

    /// Answers every input of an `input_required` round, in key order, with the calling
    /// agent's handlers (see [`Answering::answer_input`]).
    async fn answer_round(
        &self,
        saved: &SavedRound,
        asker: Option<&Arc<dyn crate::tool::Asker>>,
    ) -> Result<rmcp::model::InputResponses, CallFailure> {
        use crate::tool::{Answer, Input, RootsRequest};
        use rmcp::model::InputRequest;
        let unknown = |key: &str, message: String| {
            CallFailure::Protocol(format!(
                "the server's input request '{key}' cannot be answered: {message}"
            ))
        };
        // Kept with a deferred question, to be answered when the call goes on.
        let kept = serde_json::to_value(saved).unwrap_or_default();
        let mut responses = rmcp::model::InputResponses::new();
        for (key, request) in &saved.inputs {
            let input = match request {
                InputRequest::CreateMessage(request) => Input::Sampling(
                    super::asking::sampling_request(&request.params)
                        .map_err(|message| unknown(key, message))?
                        .with_key(key.clone()),
                ),
                InputRequest::Elicitation(request) => Input::Elicitation(
                    super::asking::elicitation(&request.params)
                        .map_err(|message| unknown(key, message))?
                        .with_key(key.clone()),
                ),
                InputRequest::ListRoots(_) => {
                    Input::Roots(RootsRequest::new().with_key(key.clone()))
                }
                _ => {
                    return Err(unknown(
                        key,
                        "a kind of input this client does not know".to_owned(),
                    ));
                }
            };
            let what = input.what();
            let asked = match &input {
                Input::Elicitation(request) => Some(request.clone()),
                _ => None,
            };
            let unanswered = |error| CallFailure::Unanswered { what, error };
            let answer = self
                .answering
                .answer_input(&self.server, key, input, asker, &kept)
                .await
                .map_err(unanswered)?;
            let value = match answer {
                Answer::Sampling(reply) => {
                    serde_json::to_value(super::asking::sampling_result(reply))
                }
                Answer::Elicitation(mut answer) => {
                    if let Some(asked) = &asked {
                        fill_defaults(asked, &mut answer);
                        crate::ask::check_answer(asked, &answer).map_err(unanswered)?;
                    }
                    serde_json::to_value(super::asking::elicit_result(answer))
                }
                Answer::Roots(roots) => serde_json::to_value(super::asking::roots_result(&roots)),
            }
            .map_err(|e| unknown(key, e.to_string()))?;
            responses.insert(key.clone(), value);
        }
        Ok(responses)
    }

    /// After a request failed: when the server asked for authorization (a 401, or a 403 for
    /// more scopes, as after a token was revoked, its authorization server changed, or a call
    /// needs more scopes) and the connection signs in with OAuth, signs in again; `Ok(true)`
    /// means the request should be sent once more. At most
    /// [`MAX_SIGN_INS`](super::oauth::MAX_SIGN_INS) per request.
    async fn sign_in_again(
        &self,
        error: &ServiceError,
        sign_ins: &mut usize,
    ) -> Result<bool, String> {
        let (Some((url, oauth)), Some(challenge)) = (&self.oauth, error.auth_challenge()) else {
            return Ok(false);
        };
        if *sign_ins == super::oauth::MAX_SIGN_INS {
            return Ok(false);
        }
        *sign_ins += 1;
        tracing::info!(target: "hpd_agent::mcp", server = %self.server, "signing in again (OAuth)");
        oauth
            .sign_in(url, challenge)
            .await
            .map(|()| true)
            .map_err(|message| {
                scrub_secrets(
                    format!("the OAuth sign-in failed: {message}"),
                    &oauth.secrets(),
                )
            })
    }

    /// The capabilities the server declared in the handshake.
    pub(crate) fn capabilities(&self) -> Option<rmcp::model::ServerCapabilities> {
        self.server_info().map(|info| info.capabilities.clone())
    }

    /// Sends one request the application makes (resources, prompts, completion), waiting at
    /// most `timeout` and signing in again when an OAuth server asks for it.
    pub(crate) async fn request<T, F, Fut>(
        &self,
        method: &str,
        timeout: Duration,
        send: F,
    ) -> Result<T, McpError>
    where
        F: Fn(rmcp::service::Peer<RoleClient>) -> Fut,
        Fut: std::future::Future<Output = Result<T, ServiceError>>,
    {
        let failed = |message: String, code: Option<i32>| McpError::Request {
            server: self.server.clone(),
            method: method.to_owned(),
            message,
            code,
        };
        if self.is_closed() {
            let message = self
                .stderr_tail
                .quote("the connection is closed".to_owned())
                .await;
            return Err(failed(message, None));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let mut sign_ins = 0;
        loop {
            let answer = tokio::time::timeout_at(deadline, send(self.service.peer().clone())).await;
            return match answer {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => match self.sign_in_again(&error, &mut sign_ins).await {
                    Ok(true) => continue,
                    Err(message) => Err(failed(message, None)),
                    Ok(false) => Err(match error {
                        ServiceError::McpError(error) => {
                            failed(error.message.to_string(), Some(error.code.0))
                        }
                        ServiceError::UnexpectedResponse => {
                            failed(format!("the answer is not a {method} result"), None)
                        }
                        other => failed(
                            self.stderr_tail.quote(describe_service_error(&other)).await,
                            None,
                        ),
                    }),
                },
                Err(_) => Err(McpError::Timeout {
                    server: self.server.clone(),
                    what: method.to_owned(),
                    timeout,
                }),
            };
        }
    }

    /// Gets a prompt for the application (`prompts/get`), waiting at most `timeout` in all.
    /// The server's `input_required` rounds (2026-07-28) are answered as a tool call's are,
    /// with the harness's handlers (its elicitation handler, its roots; sampling by the
    /// calling agent's model when a call of one is in flight, as for a server's request) and
    /// the request sent again with the answers and the server's request state, at most
    /// [`MAX_ROUNDS`] times. A question that cannot be answered, or that a handler defers
    /// (nothing can pause here), fails the request.
    pub(crate) async fn get_prompt(
        &self,
        mut params: rmcp::model::GetPromptRequestParams,
        timeout: Duration,
    ) -> Result<rmcp::model::GetPromptResult, McpError> {
        use rmcp::model::GetPromptResponse;
        const METHOD: &str = "prompts/get";
        let failed = |message: String| McpError::Request {
            server: self.server.clone(),
            method: METHOD.to_owned(),
            message,
            code: None,
        };
        let timed_out = || McpError::Timeout {
            server: self.server.clone(),
            what: METHOD.to_owned(),
            timeout,
        };
        let deadline = tokio::time::Instant::now() + timeout;
        let mut rounds = Rounds::default();
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let response = self
                .request(METHOD, left, |peer| {
                    let params = params.clone();
                    async move { peer.get_prompt_once(params).await }
                })
                .await
                .map_err(|error| match error {
                    McpError::Timeout { .. } => timed_out(),
                    other => other,
                })?;
            let result = match response {
                GetPromptResponse::Complete(result) => return Ok(result),
                GetPromptResponse::InputRequired(result) => result,
                _ => return Err(failed("the answer is not a prompts/get result".to_owned())),
            };
            let saved = SavedRound::of(&params.name, result).map_err(failed)?;
            rounds.next(&saved, "prompt").await.map_err(failed)?;
            let responses = tokio::time::timeout_at(deadline, self.answer_round(&saved, None))
                .await
                .map_err(|_| timed_out())?
                .map_err(|failure| {
                    failed(match failure {
                        CallFailure::Unanswered { what, error } => format!(
                            "the server asked for {what}, and this client could not answer: {error}"
                        ),
                        CallFailure::Closed(message) | CallFailure::Protocol(message) => message,
                        CallFailure::TimedOut(_) => "the answer took too long".to_owned(),
                    })
                })?;
            params.input_responses = (!responses.is_empty()).then_some(responses);
            params.request_state = saved.state;
        }
    }

    /// Whether the server answers a ping within `timeout`.
    pub(crate) async fn ping(&self, timeout: Duration) -> bool {
        let ping = self
            .service
            .peer()
            .send_request(rmcp::model::ClientRequest::PingRequest(Default::default()));
        matches!(tokio::time::timeout(timeout, ping).await, Ok(Ok(_)))
    }
}

/// The revision the client asks for with `server/discover`. Only the stateless one: a
/// discover that settled on a revision with sessions would leave the client without one, and
/// so without the server's `notifications/tools/list_changed`; such servers are reached with
/// `initialize` instead.
const DISCOVER_VERSIONS: [ProtocolVersion; 1] = [ProtocolVersion::V_2026_07_28];

/// Connects over streamable HTTP the way `rmcp` negotiates: `server/discover` first (its
/// `Auto` lifecycle), falling back to `initialize` when the server answers as a legacy server.
///
/// `rmcp` falls back only when the discover probe ends in a JSON-RPC error; a server that
/// offers only revisions with sessions (its answer names no revision the client discovers
/// with), and a legacy server
/// that refuses the probe at the HTTP level instead (a 400 or 404 for a request without a
/// session, as several SDKs answer) fails the probe. Such a server gets one more attempt, on a
/// new transport, with the `initialize` handshake alone. `secrets` are scrubbed from what is
/// logged of the first attempt.
async fn connect_http<T, F>(
    state: ClientState,
    make_transport: F,
    timeout: Duration,
    secrets: &[String],
) -> Result<
    Result<RunningService<RoleClient, ClientState>, rmcp::service::ClientInitializeError>,
    tokio::time::error::Elapsed,
>
where
    F: Fn() -> T,
    T: rmcp::transport::Transport<RoleClient> + 'static,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: DISCOVER_VERSIONS.to_vec(),
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    };
    let retry_state = ClientState {
        tools_changed: state.tools_changed.clone(),
        server: state.server.clone(),
        answering: state.answering.clone(),
    };
    match tokio::time::timeout_at(
        deadline,
        state.serve_with_lifecycle(make_transport(), lifecycle),
    )
    .await
    {
        // A refusal for want of authorization is the same for both handshakes.
        Ok(Err(error)) if error.auth_challenge().is_none() => {
            // The server's answer may quote the request's headers.
            let error = scrub_secrets(error.to_string(), secrets);
            tracing::debug!(target: "hpd_agent::mcp", server = %retry_state.server, %error, "server/discover failed; trying initialize");
            tokio::time::timeout_at(deadline, retry_state.serve(make_transport())).await
        }
        other => other,
    }
}

/// Connects through `rmcp`'s OAuth client: the kept tokens are sent; a 401 or a 403 with
/// `insufficient_scope` starts a sign-in (at most [`MAX_SIGN_INS`](super::oauth::MAX_SIGN_INS)
/// times), after which the handshake is tried again.
async fn connect_with_oauth(
    server: &str,
    (url, oauth): (&str, &super::McpOAuth),
    state: ClientState,
    config: StreamableHttpClientTransportConfig,
    timeout: Duration,
    endpoint: &Endpoint,
    event_stream: &EventStreamGate,
) -> Result<
    Result<
        Result<RunningService<RoleClient, ClientState>, rmcp::service::ClientInitializeError>,
        tokio::time::error::Elapsed,
    >,
    McpError,
> {
    let secrets = endpoint.secrets();
    let refused = |message: String| McpError::Handshake {
        server: server.to_owned(),
        message: scrub_secrets(message, &secrets),
    };
    let mut sign_ins = 0;
    loop {
        let manager = oauth.manager(url).await.map_err(refused)?;
        let client = GatedHttpClient::new(
            AuthClient::new(reqwest::Client::new(), manager),
            event_stream.clone(),
        );
        let attempt_state = ClientState {
            tools_changed: state.tools_changed.clone(),
            server: state.server.clone(),
            answering: state.answering.clone(),
        };
        let connected = connect_http(
            attempt_state,
            || StreamableHttpClientTransport::with_client(client.clone(), config.clone()),
            timeout,
            &secrets,
        )
        .await;
        let challenge = match &connected {
            Ok(Err(error)) => error.auth_challenge().map(str::to_owned),
            _ => None,
        };
        match challenge {
            Some(challenge) if sign_ins < super::oauth::MAX_SIGN_INS => {
                sign_ins += 1;
                tracing::info!(target: "hpd_agent::mcp", server, "signing in (OAuth)");
                oauth
                    .sign_in(url, &challenge)
                    .await
                    .map_err(|message| refused(format!("the OAuth sign-in failed: {message}")))?;
            }
            _ => return Ok(connected),
        }
    }
}

fn describe_service_error(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportClosed => "the connection closed".to_owned(),
        ServiceError::McpError(error) => {
            format!("{} (JSON-RPC error {})", error.message, error.code.0)
        }
        ServiceError::UnexpectedResponse => {
            "the answer does not have the expected shape".to_owned()
        }
        other => other.to_string(),
    }
}

/// The last lines a stdio server wrote to stderr, for error messages.
///
/// Lines and messages pass through [`scrub_secrets`] with the endpoint's secrets, so a server
/// that prints its environment does not put a secret into an error or the log.
struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    secrets: Vec<String>,
    /// Becomes `true` when stderr reached its end (at once for HTTP servers).
    done: tokio::sync::watch::Sender<bool>,
}

impl StderrTail {
    /// How long an error message waits for a dying server's last stderr lines.
    const SETTLE: Duration = Duration::from_millis(500);

    fn new(secrets: Vec<String>) -> Self {
        StderrTail {
            lines: Mutex::new(VecDeque::new()),
            secrets,
            done: tokio::sync::watch::channel(false).0,
        }
    }

    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == STDERR_TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    fn finish(&self) {
        self.done.send_replace(true);
    }

    /// `message`, followed by the last lines the server wrote to stderr when there are any.
    /// A server that is exiting gets a moment to finish writing them.
    async fn quote(&self, message: String) -> String {
        let mut done = self.done.subscribe();
        let _ = tokio::time::timeout(Self::SETTLE, done.wait_for(|finished| *finished)).await;
        let lines = self
            .lines
            .lock()
            .map(|lines| lines.iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let message = if lines.is_empty() {
            message
        } else {
            format!(
                "{message}; the server's last stderr output: {}",
                lines.join(" | ")
            )
        };
        scrub_secrets(message, &self.secrets)
    }
}

/// Logs a child's stderr lines through `tracing` and keeps the last few for error messages.
async fn forward_stderr(
    server: String,
    stderr: tokio::process::ChildStderr,
    tail: Arc<StderrTail>,
) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = scrub_secrets(line, &tail.secrets);
        tracing::debug!(target: "hpd_agent::mcp", server = %server, "stderr: {line}");
        tail.push(line);
    }
    tail.finish();
}

#[cfg(test)]
#[path = "connection_tests.rs"]
mod tests;
