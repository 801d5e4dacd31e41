//! Token usage and why the model stopped.

use serde::{Deserialize, Serialize};

/// Token usage reported by a provider.
///
/// `input_tokens` counts the whole prompt, the part read from the provider's prompt cache
/// included; `cached_input_tokens` is that part. Providers that do not report a count leave it
/// at 0.
///
/// ```
/// use hpd_agent::chat::Usage;
///
/// let mut turn = Usage::default();
/// turn += Usage::new(100, 5).with_cached_input_tokens(80);
/// turn += Usage::new(120, 7).with_cached_input_tokens(100);
/// assert_eq!((turn.input_tokens, turn.cached_input_tokens, turn.output_tokens), (220, 180, 12));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens in the prompt, cached ones included.
    pub input_tokens: u64,
    /// Tokens generated, reasoning tokens included.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's prompt cache (OpenAI `cached_tokens`, Anthropic
    /// `cache_read_input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Generated tokens spent on reasoning, where the provider reports them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// A usage of `input_tokens` prompt tokens and `output_tokens` generated ones, nothing cached.
    ///
    /// ```
    /// use hpd_agent::chat::Usage;
    ///
    /// let usage = Usage::new(1_200, 80).with_cached_input_tokens(1_000);
    /// assert_eq!((usage.input_tokens, usage.cached_input_tokens), (1_200, 1_000));
    /// ```
    #[must_use]
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage {
            input_tokens,
            output_tokens,
            ..Usage::default()
        }
    }

    /// Sets how many of the prompt tokens were read from the provider's prompt cache.
    #[must_use]
    pub fn with_cached_input_tokens(mut self, tokens: u64) -> Self {
        self.cached_input_tokens = tokens;
        self
    }

    /// Sets how many of the generated tokens were spent on reasoning.
    #[must_use]
    pub fn with_reasoning_tokens(mut self, tokens: u64) -> Self {
        self.reasoning_tokens = tokens;
        self
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
        self.cached_input_tokens += rhs.cached_input_tokens;
        self.reasoning_tokens += rhs.reasoning_tokens;
    }
}

/// Why the model stopped generating.
///
/// Every provider maps its own vocabulary onto these (see each client's docs); what it does not
/// know is kept in [`Other`](FinishReason::Other). A [`Length`](FinishReason::Length) reply was
/// cut off at the output token limit: its text is incomplete and the arguments of its last tool
/// call may be too.
///
/// ```
/// use hpd_agent::chat::FinishReason;
///
/// assert_eq!(FinishReason::default(), FinishReason::Stop);
/// assert!(FinishReason::Length.is_truncated());
/// assert_eq!(FinishReason::Other("pause_turn".into()).to_string(), "pause_turn");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// The model finished its reply (or hit a stop sequence).
    #[default]
    Stop,
    /// The model stopped to call tools.
    ToolCalls,
    /// The reply hit the output token limit and is cut off.
    Length,
    /// The provider withheld or stopped the reply (content filter, refusal).
    ContentFilter,
    /// A reason this crate does not map, as the provider named it.
    Other(String),
}

impl FinishReason {
    /// Whether the reply was cut off at the token limit.
    ///
    /// ```
    /// use hpd_agent::chat::FinishReason;
    /// assert!(!FinishReason::Stop.is_truncated());
    /// ```
    #[must_use]
    pub fn is_truncated(&self) -> bool {
        *self == FinishReason::Length
    }
}

impl std::fmt::Display for FinishReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(other) => other,
        })
    }
}
