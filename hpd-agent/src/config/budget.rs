//! The per-agent context budget (JSON `context_budget`); the trimming it asks for is in
//! [`agent::budget`](crate::agent::budget).

/// A per-agent budget for what one request sends (JSON `context_budget`).
///
/// `max_tokens` bounds the estimated prompt tokens (instructions, tool definitions and
/// messages); `max_messages` bounds the messages sent (a summary turn counts as two). Either
/// or both may be set; with neither the history is sent whole. See the
/// [module docs](crate::agent::budget) for how trimming works.
///
/// ```
/// use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient};
/// use hpd_agent::config::ContextBudget;
///
/// let config = AgentConfig::from_json(r#"{"context_budget": {"max_tokens": 1500, "max_messages": 40}}"#)?;
/// assert_eq!(config.context_budget, Some(ContextBudget::tokens(1500).with_max_messages(40)));
/// let agent = AgentBuilder::new()
///     .with_context_budget(ContextBudget::messages(20).with_drop_trimmed(true))
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// # drop(agent);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ContextBudget {
    /// The most estimated prompt tokens of one request (JSON `max_tokens`, at least 1).
    pub max_tokens: Option<usize>,
    /// The most messages of one request (JSON `max_messages`, at least 1).
    pub max_messages: Option<usize>,
    /// Removes trimmed turns from the history (and the stored session) instead of keeping them
    /// marked (JSON `drop_trimmed`, default `false`).
    pub drop_trimmed: bool,
}

impl ContextBudget {
    /// A budget of `max_tokens` prompt tokens per request.
    ///
    /// ```
    /// let budget = hpd_agent::config::ContextBudget::tokens(2000);
    /// assert_eq!((budget.max_tokens, budget.max_messages), (Some(2000), None));
    /// ```
    #[must_use]
    pub fn tokens(max_tokens: usize) -> Self {
        ContextBudget {
            max_tokens: Some(max_tokens),
            ..ContextBudget::default()
        }
    }

    /// A budget of `max_messages` messages per request.
    ///
    /// ```
    /// let budget = hpd_agent::config::ContextBudget::messages(30);
    /// assert_eq!(budget.max_messages, Some(30));
    /// ```
    #[must_use]
    pub fn messages(max_messages: usize) -> Self {
        ContextBudget {
            max_messages: Some(max_messages),
            ..ContextBudget::default()
        }
    }

    /// Sets [`max_tokens`](Self::max_tokens).
    ///
    /// ```
    /// let budget = hpd_agent::config::ContextBudget::messages(30).with_max_tokens(4000);
    /// assert_eq!(budget.max_tokens, Some(4000));
    /// ```
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets [`max_messages`](Self::max_messages).
    ///
    /// ```
    /// let budget = hpd_agent::config::ContextBudget::tokens(4000).with_max_messages(30);
    /// assert_eq!(budget.max_messages, Some(30));
    /// ```
    #[must_use]
    pub fn with_max_messages(mut self, max_messages: usize) -> Self {
        self.max_messages = Some(max_messages);
        self
    }

    /// Sets [`drop_trimmed`](Self::drop_trimmed).
    ///
    /// ```
    /// let budget = hpd_agent::config::ContextBudget::tokens(4000).with_drop_trimmed(true);
    /// assert!(budget.drop_trimmed);
    /// ```
    #[must_use]
    pub fn with_drop_trimmed(mut self, drop_trimmed: bool) -> Self {
        self.drop_trimmed = drop_trimmed;
        self
    }

    /// Whether the budget limits anything.
    pub(crate) fn is_limited(&self) -> bool {
        self.max_tokens.is_some() || self.max_messages.is_some()
    }
}
