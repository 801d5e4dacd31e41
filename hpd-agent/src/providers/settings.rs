//! What every HTTP client holds: the model, the base URL, the [`Transport`] (endpoint, headers,
//! API key, timeout, retries) and whether it streams, with the construction and configuration
//! the clients share (`new`, `from_env`, `with_base_url`, the redacting `Debug` fields).

use std::fmt;

use reqwest::header::{HeaderName, HeaderValue};

use crate::chat::{ChatError, ChatResponse, TextSink};

use super::http::{StreamParser, Transport, env_var, parse_base_url};

/// What sets one API apart from the others in the shared client plumbing.
pub(crate) struct Api {
    /// What a request is, for the retry trace ("OpenAI chat completion").
    pub(crate) what: &'static str,
    /// The base URL used when none is given.
    pub(crate) default_base_url: &'static str,
    /// The path appended to the base URL (`/chat/completions`).
    pub(crate) path: &'static str,
    /// The header that carries the API key (lower case), and the text before the key in it.
    pub(crate) key_header: &'static str,
    pub(crate) key_prefix: &'static str,
    /// Headers every request carries.
    pub(crate) headers: &'static [(&'static str, &'static str)],
    /// The environment variables of the key and of the base URL.
    pub(crate) key_var: &'static str,
    pub(crate) base_url_var: &'static str,
    /// The host that needs a key, and the error when the environment gives it none.
    pub(crate) keyed_host: &'static str,
    pub(crate) missing_key: &'static str,
}

/// The state an HTTP client shares with the others; each client holds one.
#[derive(Clone)]
pub(crate) struct HttpSettings {
    pub(crate) model: String,
    /// The base URL, without a trailing `/`.
    pub(crate) base_url: String,
    pub(crate) transport: Transport,
    pub(crate) streaming: bool,
    api: &'static Api,
}

impl HttpSettings {
    /// Settings for `model` at the API's default base URL, sending `api_key` (trimmed; none
    /// when empty).
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `model` is empty, when the key cannot be sent in an HTTP
    /// header, or when the HTTP client cannot be initialised.
    pub(crate) fn new(api: &'static Api, model: String, api_key: &str) -> Result<Self, ChatError> {
        if model.trim().is_empty() {
            return Err(ChatError::Config("the model name is empty".into()));
        }
        let (base_url, endpoint) =
            parse_base_url(api.default_base_url, api.path, api.default_base_url)?;
        let mut transport = Transport::new(api.what, endpoint)?;
        for (name, value) in api.headers {
            transport.set_header(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        if !api_key.trim().is_empty() {
            transport.set_secret_header(
                HeaderName::from_static(api.key_header),
                api.key_prefix,
                api_key.trim(),
            )?;
        }
        Ok(HttpSettings {
            model,
            base_url,
            transport,
            streaming: true,
            api,
        })
    }

    /// Settings for `model` from the API's key and base URL variables as `lookup` reads them
    /// (empty counts as unset).
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when the key is missing and the base URL is the API's own host,
    /// when the base URL variable is not an `http(s)` URL (the message names the variable), or
    /// for the reasons of [`new`](Self::new).
    pub(crate) fn from_lookup(
        api: &'static Api,
        model: String,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ChatError> {
        let key = env_var(lookup, api.key_var);
        let base = env_var(lookup, api.base_url_var);
        let mut settings = Self::new(api, model, key.as_deref().unwrap_or_default())?;
        if let Some(base) = base {
            settings.set_base_url(&base).map_err(|e| match e {
                ChatError::Config(m) => ChatError::Config(format!("{}: {m}", api.base_url_var)),
                other => other,
            })?;
        }
        if key.is_none() && settings.transport.endpoint.host_str() == Some(api.keyed_host) {
            return Err(ChatError::Config(api.missing_key.into()));
        }
        Ok(settings)
    }

    /// Sends requests to `{base_url}{path}` instead (a trailing `/` is ignored).
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `base_url` is not an absolute `http` or `https` URL, or has a
    /// query or fragment.
    pub(crate) fn set_base_url(&mut self, base_url: &str) -> Result<(), ChatError> {
        let (base_url, endpoint) =
            parse_base_url(base_url, self.api.path, self.api.default_base_url)?;
        self.base_url = base_url;
        self.transport.endpoint = endpoint;
        Ok(())
    }

    /// Sends an encoded request and reads the answer, streamed or not as the settings say (see
    /// [`Transport::exchange`]).
    pub(crate) async fn exchange<P: StreamParser + Send>(
        &self,
        body: &[u8],
        parser: impl Fn(u16) -> P,
        parse_body: impl Fn(&str, u16) -> Result<ChatResponse, ChatError>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        self.transport
            .exchange(body, self.streaming, parser, parse_body, text)
            .await
    }

    /// A `Debug` rendering named `client` with the shared fields: the API key only as
    /// `<redacted>` (or `None` when there is none). The client adds its own fields and
    /// finishes it.
    pub(crate) fn debug_struct<'a, 'b>(
        &self,
        f: &'a mut fmt::Formatter<'b>,
        client: &str,
    ) -> fmt::DebugStruct<'a, 'b> {
        let mut debug = f.debug_struct(client);
        debug
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field(
                "api_key",
                &self
                    .transport
                    .has_header(self.api.key_header)
                    .then_some("<redacted>"),
            )
            .field("timeout", &self.transport.timeout)
            .field("retry", &self.transport.retry)
            .field("streaming", &self.streaming);
        debug
    }
}
