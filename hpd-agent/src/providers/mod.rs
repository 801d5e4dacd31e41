//! Chat providers: the HTTP clients of three wire protocols, a scripted client for tests, and
//! the pieces the HTTP clients share.
//!
//! | client | API | module |
//! |---|---|---|
//! | [`OpenAiClient`](openai::OpenAiClient) | OpenAI Chat Completions (`/chat/completions`) and compatible servers (Ollama, vLLM, llama.cpp, LM Studio) | [`openai`] |
//! | [`OpenAiResponsesClient`](openai_responses::OpenAiResponsesClient) | OpenAI Responses (`/responses`) | [`openai_responses`] |
//! | [`AnthropicClient`](anthropic::AnthropicClient) | Anthropic Messages (`/v1/messages`) | [`anthropic`] |
//! | [`ScriptedChatClient`](scripted::ScriptedChatClient) | none: replays queued responses, records requests | [`scripted`] |
//!
//! Shared pieces: [`sse`] decodes server-sent events from raw bytes, [`retry`] decides when and
//! how long to wait before a request is sent again. Every HTTP client streams by default,
//! retries HTTP 429, 5xx, connection failures and connections closed under a request (a pooled
//! keep-alive connection the server had closed) on a fresh connection, never retries a stream
//! once part of it has arrived,
//! and never shows its API key in an error, in `Debug` output or in a trace.
//!
//! ```
//! use std::time::Duration;
//! use hpd_agent::AgentBuilder;
//! use hpd_agent::providers::openai::OpenAiClient;
//!
//! // A local OpenAI-compatible server (llama.cpp, Ollama, vLLM): no key, its own base URL.
//! let client = OpenAiClient::new("local-model", "")?
//!     .with_base_url("http://127.0.0.1:8080/v1")?
//!     .with_timeout(Duration::from_secs(300))
//!     .with_max_retries(1);
//! let agent = AgentBuilder::new().with_chat_client(client).build()?;
//! # drop(agent);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod anthropic;
pub(crate) mod http;
pub mod openai;
pub mod openai_responses;
mod pending;
pub mod retry;
pub mod scripted;
mod settings;
pub mod sse;
pub(crate) mod strict;
#[cfg(test)]
mod test_support;

/// The request as a client with [`ToolImages::Describe`](crate::chat::ToolImages::Describe) sends it:
/// tool results that hold images are sent as their text form. `described` holds the changed
/// history; nothing is copied when the mode is `Send` or no result has parts.
pub(crate) fn with_tool_images<'a>(
    request: crate::chat::ChatRequest<'a>,
    mode: crate::chat::ToolImages,
    described: &'a mut Option<Vec<crate::ChatMessage>>,
) -> crate::chat::ChatRequest<'a> {
    let has_parts = |m: &crate::ChatMessage| matches!(m, crate::ChatMessage::Tool { parts, .. } if !parts.is_empty());
    if mode == crate::chat::ToolImages::Send || !request.messages.iter().any(has_parts) {
        return request;
    }
    let messages = described.insert(request.messages.to_vec());
    for message in messages.iter_mut() {
        if let crate::ChatMessage::Tool { parts, .. } = message {
            parts.clear();
        }
    }
    crate::chat::ChatRequest {
        messages,
        ..request
    }
}

/// Whether `model` is `{family}{major}[.{minor}]...` at `at_least` or later (`gpt-5.4`,
/// `gpt-5.4-mini` and `gpt-6` are at least `gpt-` 5.4; `gpt-4o` and `gpt-5` are not).
pub(crate) fn model_at_least(model: &str, family: &str, at_least: (u32, u32)) -> bool {
    let Some(version) = model.strip_prefix(family) else {
        return false;
    };
    let number = |text: &str| -> (Option<u32>, usize) {
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        (text[..digits].parse().ok(), digits)
    };
    let (Some(major), used) = number(version) else {
        return false;
    };
    let rest = &version[used..];
    if !rest.is_empty() && !rest.starts_with(['.', '-']) {
        return false;
    }
    let minor = rest
        .strip_prefix('.')
        .and_then(|minor| number(minor).0)
        .unwrap_or(0);
    (major, minor) >= at_least
}

/// The client a model config names (see `AgentBuilder::from_config`): `provider` (`openai` by
/// default, `openai_responses`, `anthropic`; ASCII case ignored), the model (else the
/// provider's model variable), the base URL (else the provider's base URL variable) and the
/// form of deferred tool loading (else the client's default).
pub(crate) fn client_from_config(
    provider: Option<&str>,
    model: Option<&str>,
    base_url: Option<&str>,
    deferred: Option<crate::chat::DeferredTools>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<std::sync::Arc<dyn crate::ChatClient>, crate::chat::ChatError> {
    use std::sync::Arc;

    let provider = provider.unwrap_or("openai").to_ascii_lowercase();
    let model_var = match provider.as_str() {
        "openai" | "openai_responses" => "OPENAI_MODEL",
        "anthropic" => "ANTHROPIC_MODEL",
        _ => {
            return Err(crate::chat::ChatError::Config(format!(
                "unknown model provider '{provider}'; expected 'openai' (any OpenAI-compatible \
                 server, through base_url), 'openai_responses' or 'anthropic'"
            )));
        }
    };
    let model = model
        .map(str::to_owned)
        .or_else(|| http::env_var(lookup, model_var))
        .ok_or_else(|| {
            crate::chat::ChatError::Config(format!(
                "the model config names no model; set model.model or {model_var}"
            ))
        })?;
    let base_var = if provider == "anthropic" {
        "ANTHROPIC_BASE_URL"
    } else {
        "OPENAI_BASE_URL"
    };
    // The config's base URL stands in for the variable.
    let lookup = |var: &str| {
        if var == base_var {
            base_url.map(str::to_owned).or_else(|| lookup(var))
        } else {
            lookup(var)
        }
    };
    use crate::chat::DeferredTools;
    let forms: &[DeferredTools] = match provider.as_str() {
        "anthropic" => &[DeferredTools::ToolReferences, DeferredTools::ToolAdditions],
        "openai_responses" => &[DeferredTools::ToolSearch, DeferredTools::AdditionalTools],
        _ => &[],
    };
    if let Some(form) = deferred
        && form != DeferredTools::Unsupported
        && !forms.contains(&form)
    {
        let name = |form: &DeferredTools| {
            serde_json::to_value(form)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        };
        let valid: Vec<String> = std::iter::once(DeferredTools::Unsupported)
            .chain(forms.iter().copied())
            .map(|f| format!("'{}'", name(&f)))
            .collect();
        return Err(crate::chat::ChatError::Config(format!(
            "the model config's deferred_tools '{}' is not a form of the provider '{provider}'; \
             it takes {}",
            name(&form),
            valid.join(", ")
        )));
    }
    Ok(match provider.as_str() {
        "anthropic" => {
            let client = anthropic::AnthropicClient::from_lookup(model, &lookup)?;
            Arc::new(match deferred {
                Some(form) => client.with_deferred_tools(form),
                None => client,
            })
        }
        "openai_responses" => {
            let client = openai_responses::OpenAiResponsesClient::from_lookup(model, &lookup)?;
            Arc::new(match deferred {
                Some(form) => client.with_deferred_tools(form),
                None => client,
            })
        }
        _ => Arc::new(openai::OpenAiClient::from_lookup(model, &lookup)?),
    })
}

/// The setters every HTTP client has: timeout, retries, backoff.
macro_rules! http_setters {
    ($client:ident, $module:literal, $new:literal) => {
        /// Sets the timeout (default 120 s): the longest wait for the response headers
        /// (including the error body of a failed attempt) and, when streaming, the longest gap
        /// between two reads from the connection. Any bytes count, keep-alive comments
        /// included, so a long stream that keeps sending anything is never cut. A non-streamed
        /// answer must arrive whole within it. Each retry gets a fresh timeout; a timeout
        /// itself is not retried.
        ///
        /// ```
        /// use std::time::Duration;
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        ///
        #[doc = concat!("let _client = ", $new, "?.with_timeout(Duration::from_secs(30));")]
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.settings.transport.timeout = timeout;
            self
        }

        /// Sets how many times a request is retried after HTTP 429, HTTP 5xx or a connection
        /// failure (default 3; 0 never retries).
        ///
        /// ```
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        ///
        #[doc = concat!("let _client = ", $new, "?.with_max_retries(5);")]
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn with_max_retries(mut self, max_retries: u32) -> Self {
            self.settings.transport.retry.max_retries = max_retries;
            self
        }

        /// Sets the first retry's delay (default 500 ms). Retry `n` waits about
        /// `backoff * 2^n` (between half and all of it, at random), at most the [maximum
        /// backoff](Self::with_max_backoff). A `Retry-After` or `retry-after-ms` header
        /// replaces the computed delay.
        ///
        /// ```
        /// use std::time::Duration;
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        ///
        #[doc = concat!("let _client = ", $new, "?.with_backoff(Duration::from_millis(10));")]
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn with_backoff(mut self, backoff: std::time::Duration) -> Self {
            self.settings.transport.retry.backoff = backoff;
            self
        }

        /// Sets the longest wait between two attempts (default 30 s), for the computed
        /// backoff and for the provider's `Retry-After` alike.
        ///
        /// ```
        /// use std::time::Duration;
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        ///
        #[doc = concat!("let _client = ", $new, "?.with_max_backoff(Duration::from_secs(5));")]
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn with_max_backoff(mut self, max_backoff: std::time::Duration) -> Self {
            self.settings.transport.retry.max_backoff = max_backoff;
            self
        }

        /// Replaces the whole [`RetryPolicy`](crate::providers::retry::RetryPolicy).
        ///
        /// ```
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        /// use hpd_agent::providers::retry::RetryPolicy;
        ///
        #[doc = concat!("let _client = ", $new, "?.with_retry_policy(RetryPolicy { max_retries: 0, ..RetryPolicy::default() });")]
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn with_retry_policy(mut self, policy: crate::providers::retry::RetryPolicy) -> Self {
            self.settings.transport.retry = policy;
            self
        }

        /// Turns streaming on or off (default on). Off, the client reads one JSON body and
        /// calls the [`TextSink`](crate::chat::TextSink) once with the whole text.
        ///
        /// ```
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        ///
        #[doc = concat!("let client = ", $new, "?.with_streaming(false);")]
        /// assert!(!client.is_streaming());
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn with_streaming(mut self, streaming: bool) -> Self {
            self.settings.streaming = streaming;
            self
        }

        /// The model name sent with each request.
        ///
        /// ```
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        ///
        #[doc = concat!("assert!(!", $new, "?.model().is_empty());")]
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn model(&self) -> &str {
            &self.settings.model
        }

        /// The base URL, without a trailing `/`.
        ///
        /// ```
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        ///
        #[doc = concat!("assert!(", $new, "?.base_url().starts_with(\"https://\"));")]
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn base_url(&self) -> &str {
            &self.settings.base_url
        }

        /// Whether responses are streamed.
        ///
        /// ```
        #[doc = concat!("use hpd_agent::providers::", $module, "::", stringify!($client), ";")]
        ///
        #[doc = concat!("assert!(", $new, "?.is_streaming());")]
        /// # Ok::<(), hpd_agent::chat::ChatError>(())
        /// ```
        #[must_use]
        pub fn is_streaming(&self) -> bool {
            self.settings.streaming
        }
    };
}
pub(crate) use http_setters;

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn build(
        provider: Option<&str>,
        model: Option<&str>,
        base_url: Option<&str>,
        vars: &[(&str, &str)],
    ) -> Result<String, crate::chat::ChatError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        client_from_config(provider, model, base_url, None, &|name| {
            vars.get(name).cloned()
        })
        .map(|client| format!("{client:?}"))
    }

    #[test]
    fn a_model_config_sets_the_deferred_form_of_its_provider_only() {
        use crate::chat::DeferredTools;
        let local = Some("http://127.0.0.1:8080");
        let client = |provider: &str, form: DeferredTools| {
            client_from_config(Some(provider), Some("m"), local, Some(form), &|_| None)
        };
        let gateway = client("anthropic", DeferredTools::ToolAdditions).unwrap();
        assert_eq!(gateway.deferred_tools(), DeferredTools::ToolAdditions);
        let responses = client("openai_responses", DeferredTools::AdditionalTools).unwrap();
        assert_eq!(responses.deferred_tools(), DeferredTools::AdditionalTools);
        let off = client("openai", DeferredTools::Unsupported).unwrap();
        assert_eq!(off.deferred_tools(), DeferredTools::Unsupported);
        let Err(error) = client("anthropic", DeferredTools::ToolSearch) else {
            panic!("a Responses form on an Anthropic client must fail");
        };
        assert_eq!(
            config_error(Err(error)),
            "the model config's deferred_tools 'tool_search' is not a form of the provider \
             'anthropic'; it takes 'none', 'tool_references', 'tool_additions'"
        );
        let Err(error) = client("openai", DeferredTools::ToolReferences) else {
            panic!("Chat Completions has no deferred form");
        };
        assert!(config_error(Err(error)).ends_with("it takes 'none'"));
    }

    #[test]
    fn model_versions_compare_by_number() {
        assert!(model_at_least("gpt-5.4", "gpt-", (5, 4)));
        assert!(model_at_least("gpt-5.4-mini", "gpt-", (5, 4)));
        assert!(model_at_least("gpt-5.10", "gpt-", (5, 4)));
        assert!(model_at_least("gpt-6", "gpt-", (5, 4)));
        assert!(!model_at_least("gpt-5", "gpt-", (5, 4)));
        assert!(!model_at_least("gpt-5.3-codex", "gpt-", (5, 4)));
        assert!(!model_at_least("gpt-4o", "gpt-", (5, 4)));
        assert!(!model_at_least("o3", "gpt-", (5, 4)));
    }

    fn config_error(result: Result<String, crate::chat::ChatError>) -> String {
        match result {
            Err(crate::chat::ChatError::Config(message)) => message,
            other => panic!("expected a Config error, got {other:?}"),
        }
    }

    #[test]
    fn model_configs_name_their_provider() {
        let openai = build(None, Some("m"), None, &[("OPENAI_API_KEY", "sk-123456")]).unwrap();
        assert!(openai.starts_with("dyn ChatClient"), "{openai}");
        for (provider, key) in [
            ("openai", "OPENAI_API_KEY"),
            ("OpenAI_Responses", "OPENAI_API_KEY"),
            ("ANTHROPIC", "ANTHROPIC_API_KEY"),
        ] {
            assert!(build(Some(provider), Some("m"), None, &[(key, "k-123456")]).is_ok());
            // Without a key only a local server works; the config's base_url stands in for the
            // variable.
            let message = config_error(build(Some(provider), Some("m"), None, &[]));
            assert!(message.contains(key), "{message}");
            assert!(
                build(
                    Some(provider),
                    Some("m"),
                    Some("http://127.0.0.1:8080"),
                    &[]
                )
                .is_ok()
            );
        }
        let message = config_error(build(Some("gemini"), Some("m"), None, &[]));
        assert!(
            message.starts_with("unknown model provider 'gemini'")
                && message.contains("'openai_responses' or 'anthropic'"),
            "{message}"
        );
        let message = config_error(build(Some("anthropic"), None, None, &[]));
        assert_eq!(
            message,
            "the model config names no model; set model.model or ANTHROPIC_MODEL"
        );
        assert!(
            build(
                Some("anthropic"),
                None,
                Some("http://127.0.0.1:8080"),
                &[("ANTHROPIC_MODEL", "claude")]
            )
            .is_ok()
        );
        let message = config_error(build(
            Some("anthropic"),
            Some("m"),
            None,
            &[("ANTHROPIC_BASE_URL", "localhost:8080")],
        ));
        assert!(
            message.starts_with("ANTHROPIC_BASE_URL: invalid base URL"),
            "{message}"
        );
    }
}
