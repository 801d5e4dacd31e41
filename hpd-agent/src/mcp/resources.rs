//! Resources: what a server lists and serves at a URI or through a URI template, the caching
//! hints of 2026-07-28, and the handle that tells subscribed clients a resource changed.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rmcp::model::{
    CacheScope as McpCacheScope, Resource as McpResource, ResourceTemplate as McpResourceTemplate,
};

use super::{Completer, ProviderError};
use crate::chat::ResourceContents;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Reader =
    Arc<dyn Fn(ResourceRequest) -> BoxFuture<Result<ResourceBody, ProviderError>> + Send + Sync>;

/// Who may cache a result (2026-07-28 `cacheScope`).
///
/// ```
/// use hpd_agent::mcp::CacheScope;
///
/// assert_ne!(CacheScope::Public, CacheScope::Private);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client or intermediary, for any user.
    Public,
    /// Only the requesting user's client.
    Private,
}

/// How long a result stays fresh and who may cache it: the `ttlMs` and `cacheScope` that
/// 2026-07-28 puts on `resources/list`, `resources/templates/list`, `prompts/list` and
/// `resources/read` results. Sessions of older revisions get no hints.
///
/// Exhaustive on purpose: the two fields are the whole of what the revision defines.
///
/// ```
/// use std::time::Duration;
/// use hpd_agent::mcp::{CacheHint, CacheScope};
///
/// let hint = CacheHint::public(Duration::from_secs(300));
/// assert_eq!(hint, CacheHint { ttl: Duration::from_secs(300), scope: CacheScope::Public });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheHint {
    /// How long the result may be used without asking again (sent in whole milliseconds).
    pub ttl: Duration,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint for anyone's cache.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::mcp::{CacheHint, CacheScope};
    ///
    /// assert_eq!(CacheHint::public(Duration::from_secs(60)).scope, CacheScope::Public);
    /// ```
    #[must_use]
    pub fn public(ttl: Duration) -> Self {
        CacheHint {
            ttl,
            scope: CacheScope::Public,
        }
    }

    /// A hint for the requesting user's client only.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::mcp::{CacheHint, CacheScope};
    ///
    /// assert_eq!(CacheHint::private(Duration::from_secs(5)).scope, CacheScope::Private);
    /// ```
    #[must_use]
    pub fn private(ttl: Duration) -> Self {
        CacheHint {
            ttl,
            scope: CacheScope::Private,
        }
    }

    pub(crate) fn ttl_ms(self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) fn mcp_scope(self) -> McpCacheScope {
        match self.scope {
            CacheScope::Public => McpCacheScope::Public,
            CacheScope::Private => McpCacheScope::Private,
        }
    }
}

/// A resource as a server lists it: `resources/list` on the server, [`McpClient::list_resources`](super::McpClient::list_resources)
/// on the client.
///
/// ```
/// use hpd_agent::mcp::ResourceInfo;
///
/// let info = ResourceInfo::new("file:///notes.md", "notes").with_mime_type("text/markdown");
/// assert_eq!((info.uri.as_str(), info.mime_type.as_deref()), ("file:///notes.md", Some("text/markdown")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceInfo {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// Its size in bytes.
    pub size: Option<u64>,
}

impl ResourceInfo {
    /// A resource with a URI and a name and nothing else.
    ///
    /// ```
    /// use hpd_agent::mcp::ResourceInfo;
    ///
    /// assert_eq!(ResourceInfo::new("test://a", "a").description, None);
    /// ```
    #[must_use]
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceInfo {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// Sets its MIME type.
    ///
    /// ```
    /// use hpd_agent::mcp::ResourceInfo;
    ///
    /// assert_eq!(ResourceInfo::new("test://a", "a").with_mime_type("image/png").mime_type.as_deref(), Some("image/png"));
    /// ```
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    pub(crate) fn from_mcp(resource: &McpResource) -> Self {
        ResourceInfo {
            uri: resource.uri.clone(),
            name: resource.name.clone(),
            title: resource.title.clone(),
            description: resource.description.clone(),
            mime_type: resource.mime_type.clone(),
            size: resource.size,
        }
    }

    pub(crate) fn to_mcp(&self) -> McpResource {
        let mut resource = McpResource::new(self.uri.clone(), self.name.clone());
        resource.title.clone_from(&self.title);
        resource.description.clone_from(&self.description);
        resource.mime_type.clone_from(&self.mime_type);
        resource.size = self.size;
        resource
    }
}

/// A resource template as a server lists it: a URI template such as `file:///{+path}` whose
/// variables a client fills in to read a resource.
///
/// ```
/// use hpd_agent::mcp::ResourceTemplateInfo;
///
/// let info = ResourceTemplateInfo::new("db://{table}/{row}", "row");
/// assert_eq!(info.uri_template, "db://{table}/{row}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceTemplateInfo {
    /// The URI template (RFC 6570).
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What its resources are.
    pub description: Option<String>,
    /// The MIME type of its resources, when they all have one.
    pub mime_type: Option<String>,
}

impl ResourceTemplateInfo {
    /// A template with a URI template and a name and nothing else.
    ///
    /// ```
    /// use hpd_agent::mcp::ResourceTemplateInfo;
    ///
    /// assert_eq!(ResourceTemplateInfo::new("test://{id}", "item").name, "item");
    /// ```
    #[must_use]
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplateInfo {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    pub(crate) fn from_mcp(template: &McpResourceTemplate) -> Self {
        ResourceTemplateInfo {
            uri_template: template.uri_template.clone(),
            name: template.name.clone(),
            title: template.title.clone(),
            description: template.description.clone(),
            mime_type: template.mime_type.clone(),
        }
    }

    pub(crate) fn to_mcp(&self) -> McpResourceTemplate {
        let mut template = McpResourceTemplate::new(self.uri_template.clone(), self.name.clone());
        template.title.clone_from(&self.title);
        template.description.clone_from(&self.description);
        template.mime_type.clone_from(&self.mime_type);
        template
    }
}

/// What a resource reader is asked: the URI, and for a template the values of its variables
/// (percent-decoded).
///
/// ```
/// use hpd_agent::mcp::ResourceRequest;
///
/// let request = ResourceRequest::new("test://template/7/data").with_variable("id", "7");
/// assert_eq!(request.variable("id"), Some("7"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// The template's variables (empty for a plain resource).
    pub variables: BTreeMap<String, String>,
}

impl ResourceRequest {
    /// A request for `uri` without variables (for testing a reader).
    ///
    /// ```
    /// use hpd_agent::mcp::ResourceRequest;
    ///
    /// assert!(ResourceRequest::new("test://a").variables.is_empty());
    /// ```
    #[must_use]
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceRequest {
            uri: uri.into(),
            variables: BTreeMap::new(),
        }
    }

    /// Adds a variable's value.
    ///
    /// ```
    /// use hpd_agent::mcp::ResourceRequest;
    ///
    /// assert_eq!(ResourceRequest::new("db://t/1").with_variable("row", "1").variable("row"), Some("1"));
    /// ```
    #[must_use]
    pub fn with_variable(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.variables.insert(name.into(), value.into());
        self
    }

    /// A variable's value.
    ///
    /// ```
    /// use hpd_agent::mcp::ResourceRequest;
    ///
    /// assert_eq!(ResourceRequest::new("test://a").variable("id"), None);
    /// ```
    #[must_use]
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables.get(name).map(String::as_str)
    }
}

/// What a resource reader returns: the content, text or binary, and its MIME type when it
/// differs from the one registered.
///
/// ```
/// use hpd_agent::mcp::ResourceBody;
/// use hpd_agent::chat::ResourceContents;
///
/// let body = ResourceBody::text("# Notes").with_mime_type("text/markdown");
/// assert_eq!(body.contents, ResourceContents::Text("# Notes".into()));
/// let png = ResourceBody::blob(vec![0x89, b'P', b'N', b'G']).with_mime_type("image/png");
/// assert!(matches!(png.contents, ResourceContents::Blob(_)));
/// assert_eq!(ResourceBody::from("plain"), ResourceBody::text("plain"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceBody {
    /// The content.
    pub contents: ResourceContents,
    /// Its MIME type; `None` uses the registered one.
    pub mime_type: Option<String>,
}

impl ResourceBody {
    /// Text content.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        ResourceBody {
            contents: ResourceContents::Text(text.into()),
            mime_type: None,
        }
    }

    /// Binary content (sent base64-encoded).
    #[must_use]
    pub fn blob(data: impl Into<Bytes>) -> Self {
        ResourceBody {
            contents: ResourceContents::Blob(data.into()),
            mime_type: None,
        }
    }

    /// Sets the MIME type of this content.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

impl From<String> for ResourceBody {
    fn from(text: String) -> Self {
        ResourceBody::text(text)
    }
}

impl From<&str> for ResourceBody {
    fn from(text: &str) -> Self {
        ResourceBody::text(text)
    }
}

fn reader<F, Fut>(read: F) -> Reader
where
    F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ResourceBody, ProviderError>> + Send + 'static,
{
    Arc::new(move |request| Box::pin(read(request)))
}

/// A resource an [`McpServer`](super::McpServer) serves at a fixed URI; see
/// [`McpServer::with_resource`](super::McpServer::with_resource).
///
/// ```
/// use std::time::Duration;
/// use hpd_agent::mcp::{CacheHint, ProviderError, ResourceBody, ServedResource};
///
/// // Fixed content.
/// let readme = ServedResource::text("docs://readme", "readme", "Start with `cargo run`.");
/// // Content made when it is read.
/// let clock = ServedResource::new("clock://now", "now", |_request| async {
///     let seconds = std::time::SystemTime::now()
///         .duration_since(std::time::UNIX_EPOCH)
///         .map_err(|e| ProviderError::failed(e.to_string()))?
///         .as_secs();
///     Ok(ResourceBody::text(seconds.to_string()))
/// })
/// .with_description("Seconds since the Unix epoch")
/// .with_mime_type("text/plain")
/// .with_cache_hint(CacheHint::public(Duration::from_secs(1)));
/// # drop((readme, clock));
/// ```
#[derive(Clone)]
#[must_use]
pub struct ServedResource {
    pub(crate) info: ResourceInfo,
    pub(crate) read: Reader,
    pub(crate) cache: Option<CacheHint>,
}

impl std::fmt::Debug for ServedResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedResource")
            .field("info", &self.info)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl ServedResource {
    /// A resource whose content `read` makes each time it is read.
    ///
    /// ```
    /// use hpd_agent::mcp::{ResourceBody, ServedResource};
    ///
    /// let status = ServedResource::new("app://status", "status", |_| async { Ok(ResourceBody::text("ok")) });
    /// assert_eq!(status.info().uri, "app://status");
    /// ```
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ResourceBody, ProviderError>> + Send + 'static,
    {
        ServedResource {
            info: ResourceInfo::new(uri, name),
            read: reader(read),
            cache: None,
        }
    }

    /// A resource with fixed text content, of MIME type `text/plain` unless
    /// [`with_mime_type`](Self::with_mime_type) says otherwise.
    ///
    /// ```
    /// use hpd_agent::mcp::ServedResource;
    ///
    /// let notes = ServedResource::text("docs://notes", "notes", "# Notes").with_mime_type("text/markdown");
    /// assert_eq!(notes.info().mime_type.as_deref(), Some("text/markdown"));
    /// ```
    pub fn text(uri: impl Into<String>, name: impl Into<String>, text: impl Into<String>) -> Self {
        let text: String = text.into();
        let size = text.len() as u64;
        let mut resource = ServedResource::new(uri, name, move |_| {
            std::future::ready(Ok(ResourceBody::text(text.clone())))
        })
        .with_mime_type("text/plain");
        resource.info.size = Some(size);
        resource
    }

    /// A resource with fixed binary content of the given MIME type.
    ///
    /// ```
    /// use hpd_agent::mcp::ServedResource;
    ///
    /// let logo = ServedResource::blob("assets://logo.png", "logo", "image/png", vec![0x89, b'P', b'N', b'G']);
    /// assert_eq!(logo.info().size, Some(4));
    /// ```
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        data: impl Into<Bytes>,
    ) -> Self {
        let data: Bytes = data.into();
        let size = data.len() as u64;
        let mut resource = ServedResource::new(uri, name, move |_| {
            std::future::ready(Ok(ResourceBody::blob(data.clone())))
        })
        .with_mime_type(mime_type);
        resource.info.size = Some(size);
        resource
    }

    /// A title for people.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// What the resource is (clients show it to their model or user).
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Its MIME type, listed and sent with its content unless the reader names another.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.info.mime_type = Some(mime_type.into());
        self
    }

    /// Its size in bytes, listed for clients that budget what they read.
    pub fn with_size(mut self, size: u64) -> Self {
        self.info.size = Some(size);
        self
    }

    /// The caching hint of its reads on 2026-07-28 (default: none, which the protocol layer
    /// sends as `ttlMs: 0`, `cacheScope: "private"`, i.e. never reuse).
    pub fn with_cache_hint(mut self, hint: CacheHint) -> Self {
        self.cache = Some(hint);
        self
    }

    /// What `resources/list` says about it.
    #[must_use]
    pub fn info(&self) -> &ResourceInfo {
        &self.info
    }
}

/// A resource template an [`McpServer`](super::McpServer) serves: every URI that matches its
/// URI template is read by its reader, which gets the variables; see
/// [`McpServer::with_resource_template`](super::McpServer::with_resource_template).
///
/// Templates support the forms resource URIs use: `{name}` (one path segment, no `/`) and
/// `{+name}` (may contain `/`); values are percent-decoded. Other RFC 6570 operators are
/// refused when serving starts.
///
/// ```
/// use hpd_agent::mcp::{Completer, ProviderError, ResourceBody, ServedResourceTemplate};
///
/// let users = ServedResourceTemplate::new("users://{id}/profile", "profile", |request| async move {
///     match request.variable("id") {
///         Some("1") => Ok(ResourceBody::text(r#"{"name":"Ada"}"#)),
///         _ => Err(ProviderError::NotFound),
///     }
/// })
/// .with_mime_type("application/json")
/// .with_completion("id", Completer::values(["1", "2"]));
/// # drop(users);
/// ```
#[derive(Clone)]
#[must_use]
pub struct ServedResourceTemplate {
    pub(crate) info: ResourceTemplateInfo,
    pub(crate) read: Reader,
    pub(crate) cache: Option<CacheHint>,
    pub(crate) completers: BTreeMap<String, Completer>,
}

impl std::fmt::Debug for ServedResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedResourceTemplate")
            .field("info", &self.info)
            .field("cache", &self.cache)
            .field("completions", &self.completers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ServedResourceTemplate {
    /// A template whose resources `read` makes; the request carries the variables.
    pub fn new<F, Fut>(uri_template: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ResourceBody, ProviderError>> + Send + 'static,
    {
        ServedResourceTemplate {
            info: ResourceTemplateInfo::new(uri_template, name),
            read: reader(read),
            cache: None,
            completers: BTreeMap::new(),
        }
    }

    /// A title for people.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// What its resources are.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// The MIME type of its resources, sent with their content unless the reader names
    /// another.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.info.mime_type = Some(mime_type.into());
        self
    }

    /// The caching hint of its reads on 2026-07-28 (see [`ServedResource::with_cache_hint`]).
    pub fn with_cache_hint(mut self, hint: CacheHint) -> Self {
        self.cache = Some(hint);
        self
    }

    /// Completes the template variable `variable` (serving fails to start when the template
    /// has no such variable). Variables without a completer complete to nothing.
    pub fn with_completion(mut self, variable: impl Into<String>, completer: Completer) -> Self {
        self.completers.insert(variable.into(), completer);
        self
    }

    /// What `resources/templates/list` says about it.
    #[must_use]
    pub fn info(&self) -> &ResourceTemplateInfo {
        &self.info
    }
}

/// Tells the sessions of an [`McpServer`](super::McpServer) that a resource changed: clients
/// subscribed to its URI get `notifications/resources/updated` (with `resources/subscribe` up
/// to 2025-11-25, on a `subscriptions/listen` stream from 2026-07-28 on). Cheap to clone; get
/// it from [`McpServer::resource_notifier`](super::McpServer::resource_notifier).
///
/// ```
/// use hpd_agent::mcp::{McpServer, ServedResource};
/// use hpd_agent::{AgentBuilder, ScriptedChatClient};
///
/// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
/// let server = McpServer::new(agent).with_resource(ServedResource::text("app://status", "status", "ok"));
/// let notifier = server.resource_notifier();
/// // Later, after the status changed:
/// notifier.updated("app://status");
/// # Ok::<(), hpd_agent::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ResourceNotifier {
    pub(crate) sender: tokio::sync::broadcast::Sender<String>,
}

impl ResourceNotifier {
    /// Says that the resource at `uri` changed. Sessions not subscribed to it hear nothing;
    /// with no session open this does nothing.
    pub fn updated(&self, uri: impl Into<String>) {
        let _ = self.sender.send(uri.into());
    }
}

impl Default for ResourceNotifier {
    fn default() -> Self {
        // Updates a slow session has not forwarded yet; older ones are dropped for it (with a
        // debug log line), since a client rereads a resource after any update anyway.
        ResourceNotifier {
            sender: tokio::sync::broadcast::channel(256).0,
        }
    }
}
