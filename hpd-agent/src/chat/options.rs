//! Generation settings sent with every model request: [`ModelOptions`] and [`ToolChoice`].

use std::sync::LazyLock;

use serde_json::{Map, Value};

/// Generation settings for model requests.
///
/// Every field is optional: an unset field is not sent, so the provider's default applies.
/// Set them on the agent ([`AgentBuilder::with_model_options`](crate::AgentBuilder::with_model_options)),
/// per run ([`AgentRunConfig::with_model_options`](crate::AgentRunConfig::with_model_options),
/// merged over the agent's with [`merged_with`](Self::merged_with)), or in JSON config under
/// `model.options`. Each provider maps what its API has and ignores the rest; its docs list
/// both. `extra` is merged into the request body last, for fields this type does not name.
///
/// ```
/// use hpd_agent::chat::{ModelOptions, ToolChoice};
/// use serde_json::json;
///
/// let options = ModelOptions::new()
///     .with_temperature(0.0)
///     .with_max_output_tokens(512)
///     .with_stop(["\n\n"])
///     .with_tool_choice(ToolChoice::Required)
///     .with_extra("top_k", json!(40));
/// assert_eq!(options.temperature, Some(0.0));
/// assert_eq!(options.extra["top_k"], 40);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ModelOptions {
    /// Sampling temperature (JSON `temperature`).
    pub temperature: Option<f64>,
    /// Nucleus sampling mass (JSON `top_p`).
    pub top_p: Option<f64>,
    /// The most tokens one reply may generate (JSON `max_output_tokens`). A reply that hits it
    /// ends with [`FinishReason::Length`](crate::chat::FinishReason::Length).
    pub max_output_tokens: Option<u32>,
    /// Stop sequences (JSON `stop`); empty sends none.
    pub stop: Vec<String>,
    /// Sampling seed, for providers that offer reproducible sampling (JSON `seed`).
    pub seed: Option<i64>,
    /// Whether and which tool the model must call (JSON `tool_choice`).
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may call several tools in one reply (JSON `parallel_tool_calls`).
    pub parallel_tool_calls: Option<bool>,
    /// Provider-specific fields merged into the top level of the request body last, replacing
    /// a field of the same name the client wrote (JSON `extra`, an object).
    pub extra: Map<String, Value>,
}

static DEFAULT_OPTIONS: LazyLock<ModelOptions> = LazyLock::new(ModelOptions::default);

impl ModelOptions {
    /// No options set.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    ///
    /// let options = ModelOptions::new();
    /// assert!(options.is_empty());
    /// assert_eq!(options, ModelOptions::default());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A shared reference to the empty options (what a request without options carries).
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    /// assert!(ModelOptions::none().is_empty());
    /// ```
    #[must_use]
    pub fn none() -> &'static ModelOptions {
        &DEFAULT_OPTIONS
    }

    /// Whether no option is set.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    /// assert!(ModelOptions::new().is_empty());
    /// assert!(!ModelOptions::new().with_seed(7).is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == ModelOptions::default()
    }

    /// Sets `temperature`.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    ///
    /// assert_eq!(ModelOptions::new().with_temperature(0.2).temperature, Some(0.2));
    /// ```
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets `top_p`.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    ///
    /// assert_eq!(ModelOptions::new().with_top_p(0.9).top_p, Some(0.9));
    /// ```
    #[must_use]
    pub fn with_top_p(mut self, top_p: f64) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// Sets `max_output_tokens`.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    ///
    /// assert_eq!(ModelOptions::new().with_max_output_tokens(512).max_output_tokens, Some(512));
    /// ```
    #[must_use]
    pub fn with_max_output_tokens(mut self, max_output_tokens: u32) -> Self {
        self.max_output_tokens = Some(max_output_tokens);
        self
    }

    /// Sets the stop sequences.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    ///
    /// assert_eq!(ModelOptions::new().with_stop(["\n\n", "END"]).stop, ["\n\n", "END"]);
    /// ```
    #[must_use]
    pub fn with_stop<S: Into<String>>(mut self, stop: impl IntoIterator<Item = S>) -> Self {
        self.stop = stop.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `seed`.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    ///
    /// assert_eq!(ModelOptions::new().with_seed(42).seed, Some(42));
    /// ```
    #[must_use]
    pub fn with_seed(mut self, seed: i64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets `tool_choice`.
    ///
    /// ```
    /// use hpd_agent::chat::{ModelOptions, ToolChoice};
    ///
    /// let options = ModelOptions::new().with_tool_choice(ToolChoice::tool("get_weather"));
    /// assert_eq!(options.tool_choice, Some(ToolChoice::Tool("get_weather".into())));
    /// ```
    #[must_use]
    pub fn with_tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = Some(tool_choice);
        self
    }

    /// Sets `parallel_tool_calls`.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    ///
    /// assert_eq!(ModelOptions::new().with_parallel_tool_calls(false).parallel_tool_calls, Some(false));
    /// ```
    #[must_use]
    pub fn with_parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = Some(parallel);
        self
    }

    /// Adds one field to `extra`.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    /// use serde_json::json;
    ///
    /// let options = ModelOptions::new().with_extra("reasoning_effort", json!("low"));
    /// assert_eq!(options.extra["reasoning_effort"], "low");
    /// ```
    #[must_use]
    pub fn with_extra(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }

    /// These options with every field `over` sets replacing this one's; `extra` objects are
    /// merged key by key, `over`'s winning. `stop` is replaced when `over` has any.
    ///
    /// ```
    /// use hpd_agent::chat::ModelOptions;
    /// use serde_json::json;
    ///
    /// let agent = ModelOptions::new().with_temperature(0.7).with_seed(1).with_extra("a", json!(1));
    /// let run = ModelOptions::new().with_temperature(0.0).with_extra("b", json!(2));
    /// let merged = agent.merged_with(&run);
    /// assert_eq!((merged.temperature, merged.seed), (Some(0.0), Some(1)));
    /// assert_eq!(merged.extra.len(), 2);
    /// ```
    #[must_use]
    pub fn merged_with(&self, over: &ModelOptions) -> ModelOptions {
        let mut extra = self.extra.clone();
        for (key, value) in &over.extra {
            extra.insert(key.clone(), value.clone());
        }
        ModelOptions {
            temperature: over.temperature.or(self.temperature),
            top_p: over.top_p.or(self.top_p),
            max_output_tokens: over.max_output_tokens.or(self.max_output_tokens),
            stop: if over.stop.is_empty() {
                self.stop.clone()
            } else {
                over.stop.clone()
            },
            seed: over.seed.or(self.seed),
            tool_choice: over
                .tool_choice
                .clone()
                .or_else(|| self.tool_choice.clone()),
            parallel_tool_calls: over.parallel_tool_calls.or(self.parallel_tool_calls),
            extra,
        }
    }
}

/// Whether and which tool the model must call.
///
/// In JSON config: `"auto"`, `"none"`, `"required"` or `{"tool": "name"}`.
///
/// The agent applies a forcing choice ([`Required`](ToolChoice::Required),
/// [`Tool`](ToolChoice::Tool)) to the requests of a turn until the model has called a tool;
/// later requests of the turn are sent with [`Auto`](ToolChoice::Auto), since a model forced
/// to call a tool on every request could never give its answer. A
/// [`Tool`](ToolChoice::Tool) name is resolved against the agent's tools before each request:
/// a visible tool is forced as it is (a qualified name such as `MathTools.add` by its own
/// name); a collapsed harness's name (in any case) forces its container, or, when the container is already
/// expanded (kept from an earlier turn), a call of any tool; a function hidden in a collapsed
/// container (bare or qualified) expands that container first, as recovery would (the
/// expansion is reported as a recovery), and then forces the function itself; a name the agent
/// does not have (with recovery turned off, hidden functions count as such) fails the run with
/// [`ChatError::Config`](crate::chat::ChatError::Config) before the request is sent.
///
/// ```
/// use hpd_agent::chat::ToolChoice;
/// assert_eq!(ToolChoice::tool("add"), ToolChoice::Tool("add".into()));
/// assert!(ToolChoice::Required.forces_a_call());
/// assert!(!ToolChoice::Auto.forces_a_call());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the providers' default).
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call some tool.
    Required,
    /// The model must call this tool.
    Tool(String),
}

impl ToolChoice {
    /// `ToolChoice::Tool(name)`.
    ///
    /// ```
    /// use hpd_agent::chat::ToolChoice;
    ///
    /// assert_eq!(ToolChoice::tool("search"), ToolChoice::Tool("search".to_owned()));
    /// ```
    #[must_use]
    pub fn tool(name: impl Into<String>) -> Self {
        ToolChoice::Tool(name.into())
    }

    /// Whether the choice makes the model call a tool ([`Required`](Self::Required) or
    /// [`Tool`](Self::Tool)).
    ///
    /// ```
    /// use hpd_agent::chat::ToolChoice;
    ///
    /// assert!(ToolChoice::Required.forces_a_call() && ToolChoice::tool("search").forces_a_call());
    /// assert!(!ToolChoice::Auto.forces_a_call() && !ToolChoice::None.forces_a_call());
    /// ```
    #[must_use]
    pub fn forces_a_call(&self) -> bool {
        matches!(self, ToolChoice::Required | ToolChoice::Tool(_))
    }
}
