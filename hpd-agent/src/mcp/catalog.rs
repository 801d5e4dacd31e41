//! What an [`McpServer`](super::McpServer) serves besides tools, as its sessions serve it:
//! the registered resources, templates and prompts checked, `resources/*`, `prompts/*` and
//! `completion/complete` answered, and resource subscriptions forwarded.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, Prompt as McpPrompt, ReadResourceResult,
    Reference, ResourceContents as McpResourceContents,
};
use serde_json::{Value, json};

use super::uri_template::UriTemplate;
use super::{
    CacheHint, CompletionRequest, PromptArgument, PromptMessage, PromptRequest, ProviderError,
    ResourceNotifier, ResourceRequest, ServedPrompt, ServedResource, ServedResourceTemplate,
};
use crate::chat::ResourceContents;

/// A template with its parsed form.
#[derive(Clone)]
struct Template {
    served: ServedResourceTemplate,
    parsed: UriTemplate,
}

/// Everything a server serves besides tools, shared by its sessions.
#[derive(Clone, Default)]
pub(crate) struct Catalog {
    resources: Vec<ServedResource>,
    templates: Vec<ServedResourceTemplate>,
    prompts: Vec<ServedPrompt>,
    list_cache: Option<CacheHint>,
    notifier: ResourceNotifier,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("resources", &self.resources.len())
            .field("templates", &self.templates.len())
            .field("prompts", &self.prompts.len())
            .finish_non_exhaustive()
    }
}

impl Catalog {
    pub(crate) fn add_resource(&mut self, resource: ServedResource) {
        self.resources.push(resource);
    }

    pub(crate) fn add_template(&mut self, template: ServedResourceTemplate) {
        self.templates.push(template);
    }

    pub(crate) fn add_prompt(&mut self, prompt: ServedPrompt) {
        self.prompts.push(prompt);
    }

    pub(crate) fn set_list_cache(&mut self, hint: CacheHint) {
        self.list_cache = Some(hint);
    }

    pub(crate) fn notifier(&self) -> ResourceNotifier {
        self.notifier.clone()
    }

    /// Checks the registrations and parses the templates.
    pub(crate) fn validate(self) -> Result<ServedCatalog, String> {
        let mut uris = HashSet::new();
        for resource in &self.resources {
            if !uris.insert(resource.info.uri.as_str()) {
                return Err(format!(
                    "the resource URI '{}' is registered twice",
                    resource.info.uri
                ));
            }
        }
        let mut templates = Vec::with_capacity(self.templates.len());
        for served in &self.templates {
            let parsed = UriTemplate::parse(&served.info.uri_template)?;
            if templates
                .iter()
                .any(|t: &Template| t.served.info.uri_template == served.info.uri_template)
            {
                return Err(format!(
                    "the URI template '{}' is registered twice",
                    served.info.uri_template
                ));
            }
            for variable in served.completers.keys() {
                if !parsed.variables().any(|v| v == variable) {
                    return Err(format!(
                        "the URI template '{}' has no variable '{variable}' to complete; its variables: {}",
                        served.info.uri_template,
                        parsed.variables().collect::<Vec<_>>().join(", ")
                    ));
                }
            }
            templates.push(Template {
                served: served.clone(),
                parsed,
            });
        }
        let mut names = HashSet::new();
        for prompt in &self.prompts {
            if !names.insert(prompt.name.as_str()) {
                return Err(format!("the prompt '{}' is registered twice", prompt.name));
            }
            let mut arguments = HashSet::new();
            for argument in &prompt.arguments {
                if !arguments.insert(argument.name.as_str()) {
                    return Err(format!(
                        "the prompt '{}' declares the argument '{}' twice",
                        prompt.name, argument.name
                    ));
                }
            }
            for argument in prompt.completers.keys() {
                if !arguments.contains(argument.as_str()) {
                    return Err(format!(
                        "the prompt '{}' has no argument '{argument}' to complete",
                        prompt.name
                    ));
                }
            }
        }
        Ok(ServedCatalog {
            resources: self.resources,
            templates,
            prompts: self.prompts,
            list_cache: self.list_cache,
            notifier: self.notifier,
        })
    }
}

/// A checked [`Catalog`], as sessions serve it.
pub(crate) struct ServedCatalog {
    resources: Vec<ServedResource>,
    templates: Vec<Template>,
    prompts: Vec<ServedPrompt>,
    list_cache: Option<CacheHint>,
    notifier: ResourceNotifier,
}

impl ServedCatalog {
    /// Whether there is anything to serve under `resources/*`.
    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    pub(crate) fn has_prompts(&self) -> bool {
        !self.prompts.is_empty()
    }

    /// Completion is offered for prompt arguments and template variables.
    pub(crate) fn has_completions(&self) -> bool {
        self.has_prompts() || !self.templates.is_empty()
    }

    /// The updates of resources, for a session to forward.
    pub(crate) fn updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.notifier.sender.subscribe()
    }

    /// The list hint, on revisions that have hints.
    fn list_hint(&self, hinted: bool) -> Option<CacheHint> {
        self.list_cache.filter(|_| hinted)
    }

    pub(crate) fn list_resources(&self, hinted: bool) -> ListResourcesResult {
        let mut result = ListResourcesResult::with_all_items(
            self.resources.iter().map(|r| r.info.to_mcp()).collect(),
        );
        if let Some(hint) = self.list_hint(hinted) {
            result = result
                .with_ttl_ms(hint.ttl_ms())
                .with_cache_scope(hint.mcp_scope());
        }
        result
    }

    pub(crate) fn list_templates(&self, hinted: bool) -> ListResourceTemplatesResult {
        let mut result = ListResourceTemplatesResult::with_all_items(
            self.templates
                .iter()
                .map(|t| t.served.info.to_mcp())
                .collect(),
        );
        if let Some(hint) = self.list_hint(hinted) {
            result = result
                .with_ttl_ms(hint.ttl_ms())
                .with_cache_scope(hint.mcp_scope());
        }
        result
    }

    pub(crate) fn list_prompts(&self, hinted: bool) -> ListPromptsResult {
        let mut result = ListPromptsResult::with_all_items(
            self.prompts
                .iter()
                .map(|prompt| {
                    let arguments = (!prompt.arguments.is_empty()).then(|| {
                        prompt
                            .arguments
                            .iter()
                            .map(PromptArgument::to_mcp)
                            .collect()
                    });
                    let mut listed = McpPrompt::new(
                        prompt.name.clone(),
                        Some(prompt.description.clone()),
                        arguments,
                    );
                    listed.title.clone_from(&prompt.title);
                    listed
                })
                .collect(),
        );
        if let Some(hint) = self.list_hint(hinted) {
            result = result
                .with_ttl_ms(hint.ttl_ms())
                .with_cache_scope(hint.mcp_scope());
        }
        result
    }

    /// Whether `uri` is a resource or matches a template.
    pub(crate) fn knows(&self, uri: &str) -> bool {
        self.resources.iter().any(|r| r.info.uri == uri)
            || self
                .templates
                .iter()
                .any(|t| t.parsed.matches(uri).is_some())
    }

    /// `resources/read`: the resource at `uri`, or the first template it matches.
    pub(crate) async fn read(
        &self,
        uri: &str,
        hinted: bool,
    ) -> Result<ReadResourceResult, ErrorData> {
        let found = self
            .resources
            .iter()
            .find(|r| r.info.uri == uri)
            .map(|r| {
                (
                    &r.read,
                    ResourceRequest::new(uri),
                    r.info.mime_type.clone(),
                    r.cache,
                )
            })
            .or_else(|| {
                self.templates.iter().find_map(|t| {
                    t.parsed.matches(uri).map(|variables| {
                        let request = ResourceRequest {
                            uri: uri.to_owned(),
                            variables,
                        };
                        (
                            &t.served.read,
                            request,
                            t.served.info.mime_type.clone(),
                            t.served.cache,
                        )
                    })
                })
            });
        let Some((read, request, mime_type, cache)) = found else {
            return Err(not_found(uri));
        };
        let body = read(request).await.map_err(|error| match error {
            ProviderError::NotFound => not_found(uri),
            ProviderError::InvalidArgument(message) => {
                ErrorData::invalid_params(message, Some(json!({ "uri": uri })))
            }
            ProviderError::Failed(message) => ErrorData::internal_error(
                format!("reading the resource {uri} failed: {message}"),
                Some(json!({ "uri": uri })),
            ),
        })?;
        let mime_type = body.mime_type.or(mime_type);
        let contents = match body.contents {
            ResourceContents::Blob(data) => McpResourceContents::BlobResourceContents {
                uri: uri.to_owned(),
                mime_type,
                blob: crate::chat::base64(&data),
                meta: None,
            },
            ResourceContents::Text(text) => McpResourceContents::TextResourceContents {
                uri: uri.to_owned(),
                mime_type,
                text,
                meta: None,
            },
        };
        let mut result = ReadResourceResult::new(vec![contents]);
        if let Some(hint) = cache.filter(|_| hinted) {
            result = result
                .with_ttl_ms(hint.ttl_ms())
                .with_cache_scope(hint.mcp_scope());
        }
        Ok(result)
    }

    /// `prompts/get`: the arguments checked against the declaration, then the prompt run.
    pub(crate) async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        asker: Option<Arc<dyn crate::tool::Asker>>,
    ) -> Result<GetPromptResult, ErrorData> {
        let Some(prompt) = self.prompts.iter().find(|p| p.name == name) else {
            let names: Vec<&str> = self.prompts.iter().map(|p| p.name.as_str()).collect();
            return Err(ErrorData::invalid_params(
                format!("there is no prompt '{name}'; prompts: {}", names.join(", ")),
                Some(json!({ "name": name })),
            ));
        };
        let mut given = BTreeMap::new();
        for (key, value) in arguments.into_iter().flatten() {
            if !prompt.arguments.iter().any(|a| &a.name == key) {
                let declared: Vec<&str> =
                    prompt.arguments.iter().map(|a| a.name.as_str()).collect();
                return Err(ErrorData::invalid_params(
                    format!(
                        "the prompt '{name}' has no argument '{key}'; its arguments: {}",
                        declared.join(", ")
                    ),
                    None,
                ));
            }
            let value = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            given.insert(key.clone(), value);
        }
        let missing: Vec<&str> = prompt
            .arguments
            .iter()
            .filter(|a| a.required && !given.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ErrorData::invalid_params(
                format!(
                    "the prompt '{name}' needs the argument(s) {}",
                    missing.join(", ")
                ),
                None,
            ));
        }
        let request = PromptRequest::served(name, given, asker);
        let messages = (prompt.handler)(request)
            .await
            .map_err(|error| provider_error(error, &format!("the prompt '{name}'")))?;
        Ok(
            GetPromptResult::new(messages.iter().map(PromptMessage::to_mcp).collect())
                .with_description(prompt.description.clone()),
        )
    }

    /// `completion/complete` for a prompt argument or a template variable.
    pub(crate) async fn complete(
        &self,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let argument = request.argument.name;
        let (completer, what) = match &request.r#ref {
            Reference::Prompt(reference) => {
                let Some(prompt) = self.prompts.iter().find(|p| p.name == reference.name) else {
                    return Err(ErrorData::invalid_params(
                        format!("there is no prompt '{}'", reference.name),
                        None,
                    ));
                };
                if !prompt.arguments.iter().any(|a| a.name == argument) {
                    return Err(ErrorData::invalid_params(
                        format!("the prompt '{}' has no argument '{argument}'", prompt.name),
                        None,
                    ));
                }
                (
                    prompt.completers.get(&argument),
                    format!("the prompt '{}'", prompt.name),
                )
            }
            Reference::Resource(reference) => {
                let Some(template) = self
                    .templates
                    .iter()
                    .find(|t| t.served.info.uri_template == reference.uri)
                else {
                    return Err(ErrorData::invalid_params(
                        format!("there is no resource template '{}'", reference.uri),
                        None,
                    ));
                };
                if !template.parsed.variables().any(|v| v == argument) {
                    return Err(ErrorData::invalid_params(
                        format!(
                            "the resource template '{}' has no variable '{argument}'",
                            reference.uri
                        ),
                        None,
                    ));
                }
                (
                    template.served.completers.get(&argument),
                    format!("the resource template '{}'", reference.uri),
                )
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "completion for a '{}' reference is not offered",
                        other.reference_type()
                    ),
                    None,
                ));
            }
        };
        let Some(completer) = completer else {
            return Ok(CompleteResult::default());
        };
        let context = request
            .context
            .and_then(|context| context.arguments)
            .map(|arguments| arguments.into_iter().collect())
            .unwrap_or_default();
        let values = completer
            .complete(CompletionRequest {
                argument,
                value: request.argument.value,
                context,
            })
            .await
            .map_err(|error| provider_error(error, &what))?;
        let total = values.len();
        let has_more = total > CompletionInfo::MAX_VALUES;
        let mut info = CompletionInfo::default();
        info.values = values
            .into_iter()
            .take(CompletionInfo::MAX_VALUES)
            .collect();
        info.total = Some(u32::try_from(total).unwrap_or(u32::MAX));
        info.has_more = Some(has_more);
        Ok(CompleteResult::new(info))
    }
}

fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("Resource not found: {uri}"),
        Some(json!({ "uri": uri })),
    )
}

fn provider_error(error: ProviderError, what: &str) -> ErrorData {
    match error {
        ProviderError::NotFound => ErrorData::invalid_params(format!("{what}: not found"), None),
        ProviderError::InvalidArgument(message) => ErrorData::invalid_params(message, None),
        ProviderError::Failed(message) => {
            ErrorData::internal_error(format!("{what} failed: {message}"), None)
        }
    }
}

/// The URIs one session subscribed to with `resources/subscribe` (revisions up to
/// 2025-11-25), and the task that forwards their updates.
#[derive(Default)]
pub(crate) struct Subscriptions {
    uris: Arc<Mutex<HashSet<String>>>,
    forwarding: Mutex<Option<tokio_util::sync::DropGuard>>,
}

impl Subscriptions {
    /// Subscribes to `uri`, starting the forwarding on the first subscription.
    pub(crate) fn subscribe(
        &self,
        uri: String,
        catalog: &ServedCatalog,
        peer: rmcp::service::Peer<rmcp::RoleServer>,
    ) {
        self.uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(uri);
        let mut forwarding = self
            .forwarding
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if forwarding.is_some() {
            return;
        }
        let stop = tokio_util::sync::CancellationToken::new();
        *forwarding = Some(stop.clone().drop_guard());
        let uris = Arc::clone(&self.uris);
        let mut updates = catalog.updates();
        tokio::spawn(async move {
            loop {
                let uri = tokio::select! {
                    () = stop.cancelled() => return,
                    update = updates.recv() => match update {
                        Ok(uri) => uri,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                            tracing::debug!(target: "hpd_agent::mcp", missed, "a session missed resource updates");
                            continue;
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    },
                };
                let subscribed = uris
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains(&uri);
                if subscribed
                    && peer
                        .notify_resource_updated(
                            rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                        )
                        .await
                        .is_err()
                {
                    // The session is gone.
                    return;
                }
            }
        });
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uri);
    }
}

/// Forwards updates of the accepted URIs to a 2026-07-28 `subscriptions/listen` stream until
/// it ends, from `since_accepted` (the updates since the stream was accepted) when given.
pub(crate) async fn listen(
    catalog: &ServedCatalog,
    subscription: &rmcp::service::SubscriptionContext,
    since_accepted: Option<tokio::sync::broadcast::Receiver<String>>,
) {
    let accepted: HashSet<String> = subscription
        .accepted()
        .resource_subscriptions
        .iter()
        .flatten()
        .cloned()
        .collect();
    let mut updates = since_accepted.unwrap_or_else(|| catalog.updates());
    loop {
        let uri = tokio::select! {
            () = subscription.cancelled() => return,
            update = updates.recv() => match update {
                Ok(uri) => uri,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
        };
        if accepted.contains(&uri)
            && subscription
                .sink()
                .notify_resource_updated(uri)
                .await
                .is_err()
        {
            return;
        }
    }
}
