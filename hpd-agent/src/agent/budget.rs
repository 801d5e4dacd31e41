//! Histories within a budget: [`ContextBudget`], [`TokenEstimator`] and [`Summarizer`], and the
//! trimming the run does before each request.
//!
//! Before every model request the run checks that the request fits the agent's budget (tokens,
//! messages, or both). When it does not, the oldest whole turns (a user message and everything
//! up to the next user message) leave the request until it fits three quarters of the budget
//! (so the requests that follow share their start until the next trim, and providers' prompt
//! caches keep working); the turn being run is never trimmed. A turn is the unit, so a tool call never loses its result and the request still
//! starts with a user message, as every provider wants. The system text and the instructions
//! of expanded containers are not part of the history and are never trimmed (their tokens
//! count against the budget).
//!
//! Trimmed turns stay in the session's history, marked by
//! [`SessionState::trimmed`](crate::agent::SessionState::trimmed), and are stored with it; with
//! [`ContextBudget::drop_trimmed`] they are removed instead. With a [`Summarizer`], the trimmed
//! turns are replaced in requests by one summary turn (a user message holding the summary and
//! a short assistant reply), kept in [`SessionState::summary`](crate::agent::SessionState::summary).
//!
//! Token counts: the prompt tokens the provider reported for the previous request, plus an
//! estimate of the messages added since, when the request is otherwise the same (same trimmed
//! turns, same instructions and tools); else the [`TokenEstimator`]'s estimate of the whole
//! request ([`ApproxTokens`] unless replaced).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use crate::chat::{ChatMessage, ToolDefinition};
use crate::config::ContextBudget;

/// Estimates the tokens of request parts, for [`ContextBudget::max_tokens`]. Replace the default
/// ([`ApproxTokens`]) with the model's own tokenizer for exact counts
/// ([`AgentBuilder::with_token_estimator`](crate::AgentBuilder::with_token_estimator)).
///
/// ```
/// use hpd_agent::agent::TokenEstimator;
///
/// /// One token per whitespace-separated word.
/// #[derive(Debug)]
/// struct Words;
///
/// impl TokenEstimator for Words {
///     fn text_tokens(&self, text: &str) -> usize {
///         text.split_whitespace().count()
///     }
/// }
///
/// assert_eq!(Words.text_tokens("three short words"), 3);
/// assert_eq!(Words.message_tokens(&hpd_agent::ChatMessage::user("hi there")), 2 + 4);
/// ```
pub trait TokenEstimator: Send + Sync + fmt::Debug {
    /// The tokens of a text.
    fn text_tokens(&self, text: &str) -> usize;

    /// The tokens of one message: its texts (content, tool call names and arguments, call ids)
    /// plus 4 for the framing every chat format adds.
    fn message_tokens(&self, message: &ChatMessage) -> usize {
        let texts = match message {
            ChatMessage::User { content } => self.text_tokens(content),
            ChatMessage::Assistant {
                content,
                tool_calls,
                ..
            } => {
                content.as_deref().map_or(0, |c| self.text_tokens(c))
                    + tool_calls
                        .iter()
                        .map(|call| {
                            self.text_tokens(&call.name)
                                + self.text_tokens(&call.arguments)
                                + self.text_tokens(&call.id)
                        })
                        .sum::<usize>()
            }
            ChatMessage::Tool {
                call_id, content, ..
            } => self.text_tokens(call_id) + self.text_tokens(content),
        };
        texts + 4
    }

    /// The tokens of one tool definition: its name, description and parameter schema.
    fn tool_tokens(&self, tool: &ToolDefinition) -> usize {
        self.text_tokens(&tool.name)
            + self.text_tokens(&tool.description)
            + self.text_tokens(&tool.parameters.to_string())
            + 4
    }
}

/// The default [`TokenEstimator`]: one token per 3 bytes of UTF-8, rounded up. Tokenizers of
/// current models average about 4 characters of English per token, so this errs on the side
/// of a request that fits.
///
/// ```
/// use hpd_agent::agent::{ApproxTokens, TokenEstimator};
///
/// assert_eq!(ApproxTokens.text_tokens("abcdefg"), 3);
/// assert_eq!(ApproxTokens.text_tokens(""), 0);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproxTokens;

impl TokenEstimator for ApproxTokens {
    fn text_tokens(&self, text: &str) -> usize {
        text.len().div_ceil(3)
    }
}

/// Writes the summary of turns trimmed from requests, so the model keeps their gist
/// ([`AgentBuilder::with_summarizer`](crate::AgentBuilder::with_summarizer)).
///
/// `previous` is the summary of the turns trimmed earlier (`None` the first time) and `turns`
/// the messages trimmed now: whole turns, oldest first. The text returned replaces the summary.
/// It is sent as a user message starting `Summary of the earlier conversation:`, followed by an
/// assistant message `Understood.`, before the turns that are still sent. A summarizer can call
/// a model itself (often a small, cheap one).
///
/// ```
/// use hpd_agent::{async_trait, ChatMessage};
/// use hpd_agent::agent::Summarizer;
///
/// /// Keeps the user's messages, one a line.
/// struct UserLines;
///
/// #[async_trait]
/// impl Summarizer for UserLines {
///     async fn summarize(&self, previous: Option<&str>, turns: &[ChatMessage]) -> Result<String, String> {
///         let mut lines: Vec<String> = previous.map(str::to_owned).into_iter().collect();
///         for message in turns {
///             if let ChatMessage::User { content } = message {
///                 lines.push(format!("The user said: {content}"));
///             }
///         }
///         Ok(lines.join("\n"))
///     }
/// }
/// # drop(UserLines);
/// ```
#[async_trait]
pub trait Summarizer: Send + Sync {
    /// The new summary.
    ///
    /// # Errors
    ///
    /// A message saying why; the turn fails with [`RunError::Summarizer`](crate::RunError::Summarizer)
    /// and the history is unchanged.
    ///
    /// ```
    /// use hpd_agent::{async_trait, ChatMessage};
    /// use hpd_agent::agent::Summarizer;
    ///
    /// struct Refuses;
    ///
    /// #[async_trait]
    /// impl Summarizer for Refuses {
    ///     async fn summarize(&self, _: Option<&str>, _: &[ChatMessage]) -> Result<String, String> {
    ///         Err("the summary model is down".into())
    ///     }
    /// }
    /// # drop(Refuses);
    /// ```
    async fn summarize(
        &self,
        previous: Option<&str>,
        turns: &[ChatMessage],
    ) -> Result<String, String>;
}

/// The first words of the user message that carries a summary.
pub(crate) const SUMMARY_PREFIX: &str = "Summary of the earlier conversation:";

/// The two messages that stand for the trimmed turns in a request.
pub(crate) fn summary_turn(summary: &str) -> [ChatMessage; 2] {
    [
        ChatMessage::user(format!("{SUMMARY_PREFIX}\n{summary}")),
        ChatMessage::Assistant {
            content: Some("Understood.".to_owned()),
            tool_calls: Vec::new(),
            reasoning: Vec::new(),
        },
    ]
}

/// The agent's budgeting: the budget, the estimator and the summarizer.
#[derive(Clone)]
pub(crate) struct Budgeting {
    pub(crate) budget: ContextBudget,
    pub(crate) estimator: Arc<dyn TokenEstimator>,
    pub(crate) summarizer: Option<Arc<dyn Summarizer>>,
}

/// The prompt tokens a provider reported for a request, and what that request was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KnownPrompt {
    /// The history's trimmed mark then.
    pub(crate) trimmed: usize,
    /// The history's length then (the messages sent end there).
    pub(crate) sent_len: usize,
    /// The estimate of everything but the messages (instructions, tools, summary).
    pub(crate) fixed: usize,
    /// The prompt tokens reported.
    pub(crate) tokens: usize,
}

impl Budgeting {
    /// The estimated tokens of a request sending `history[trimmed..]` with `fixed` for the
    /// rest: the reported count of an earlier request plus the messages added since, when that
    /// request differed only by them; else the whole estimate.
    pub(crate) fn request_tokens(
        &self,
        history: &[ChatMessage],
        trimmed: usize,
        fixed: usize,
        known: Option<KnownPrompt>,
    ) -> usize {
        if let Some(known) = known
            && known.trimmed == trimmed
            && known.fixed == fixed
            && known.sent_len <= history.len()
        {
            return known.tokens + self.messages_tokens(&history[known.sent_len..]);
        }
        fixed + self.messages_tokens(&history[trimmed.min(history.len())..])
    }

    fn messages_tokens(&self, messages: &[ChatMessage]) -> usize {
        messages
            .iter()
            .map(|m| self.estimator.message_tokens(m))
            .sum()
    }

    /// The estimate of the parts of a request besides its messages.
    pub(crate) fn fixed_tokens(
        &self,
        instructions: &str,
        tools: &[Arc<ToolDefinition>],
        summary: Option<&str>,
    ) -> usize {
        let summary = summary.map_or(0, |s| {
            summary_turn(s)
                .iter()
                .map(|m| self.estimator.message_tokens(m))
                .sum()
        });
        self.estimator.text_tokens(instructions)
            + tools
                .iter()
                .map(|t| self.estimator.tool_tokens(t))
                .sum::<usize>()
            + summary
    }

    /// Whether a request of `history[trimmed..]` (plus the summary turn) fits the budget, or,
    /// with `slack`, three quarters of it (what trimming aims for, so that the requests after
    /// a trim share their start until the next one, and providers' prompt caches keep
    /// working).
    pub(crate) fn fits(
        &self,
        history: &[ChatMessage],
        trimmed: usize,
        fixed: usize,
        has_summary: bool,
        known: Option<KnownPrompt>,
        slack: bool,
    ) -> bool {
        let limit = |max: usize| if slack { max - max / 4 } else { max };
        let sent = history.len().saturating_sub(trimmed) + if has_summary { 2 } else { 0 };
        if self
            .budget
            .max_messages
            .is_some_and(|max| sent > limit(max))
        {
            return false;
        }
        self.budget
            .max_tokens
            .is_none_or(|max| self.request_tokens(history, trimmed, fixed, known) <= limit(max))
    }
}

/// The start of the turn after the one starting at `from`: the first user message after it, at
/// most `limit` (the start of the turn being run, which is never trimmed). `None` when there is
/// none.
pub(crate) fn next_turn_start(history: &[ChatMessage], from: usize, limit: usize) -> Option<usize> {
    let end = limit.min(history.len().saturating_sub(1));
    (from + 1..=end).find(|&i| matches!(history[i], ChatMessage::User { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCall;

    fn assistant(text: &str) -> ChatMessage {
        ChatMessage::Assistant {
            content: Some(text.to_owned()),
            tool_calls: Vec::new(),
            reasoning: Vec::new(),
        }
    }

    #[test]
    fn turns_start_at_user_messages_and_never_pass_the_limit() {
        let history = vec![
            ChatMessage::user("a"),
            ChatMessage::Assistant {
                content: None,
                tool_calls: vec![ToolCall::new("c1", "f", "{}")],
                reasoning: Vec::new(),
            },
            ChatMessage::Tool {
                call_id: "c1".into(),
                content: "r".into(),
                is_error: false,
                references: Vec::new(),
                parts: Vec::new(),
            },
            assistant("done"),
            ChatMessage::user("b"),
            assistant("ok"),
            ChatMessage::user("c"),
        ];
        assert_eq!(next_turn_start(&history, 0, 6), Some(4));
        assert_eq!(next_turn_start(&history, 4, 6), Some(6));
        assert_eq!(next_turn_start(&history, 4, 5), None);
        assert_eq!(next_turn_start(&history, 6, 6), None);
    }

    #[test]
    fn reported_tokens_are_used_when_the_request_only_grew() {
        let budgeting = Budgeting {
            budget: ContextBudget::tokens(100),
            estimator: Arc::new(ApproxTokens),
            summarizer: None,
        };
        let history = vec![ChatMessage::user("abcdef"), assistant("abc")];
        let known = KnownPrompt {
            trimmed: 0,
            sent_len: 1,
            fixed: 10,
            tokens: 50,
        };
        // 50 reported + the assistant message (1 + 4).
        assert_eq!(budgeting.request_tokens(&history, 0, 10, Some(known)), 55);
        // Other instructions: the whole estimate (10 + 6 + 5).
        assert_eq!(
            budgeting.request_tokens(&history, 0, 11, Some(known)),
            11 + 6 + 5
        );
    }
}
