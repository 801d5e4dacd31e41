//! Human approval of tool calls: functions marked as needing approval, runs that pause before
//! such a call runs, and the decisions that resume them.
//!
//! A function needs approval when it is declared so (`#[ai_function(requires_approval)]`,
//! [`Tool::with_approval_required`](crate::Tool::with_approval_required), a config entry's
//! `requires_approval` list, [`HarnessOptions::with_approval_required`](crate::agent::HarnessOptions::with_approval_required)),
//! or when a middleware's [`approval_required`](crate::Middleware::approval_required) hook
//! decides so for one call from its arguments (a middleware can also waive a declared need).
//!
//! When a model response calls such a function, the run resolves every call of the response,
//! runs the ones that need no approval, and stops before the others run: the run returns
//! `Ok` with [`RunOutput::pending_approvals`](crate::RunOutput::pending_approvals) listing the
//! waiting calls (id, function, harness, arguments), and the session is *paused*
//! ([`Session::pending_approvals`](crate::Session::pending_approvals)). Its state
//! ([`SessionState::paused`](crate::agent::SessionState::paused)) holds the results of the calls that
//! ran and the calls that wait, so it can be saved to any [`SessionStore`](crate::store::SessionStore)
//! and resumed by another process: [`Session::decide`](crate::Session::decide) with one
//! [`ApprovalDecision`] per waiting call. Approved calls run (with arguments the person edited,
//! if they did), denied calls get an error result that says so, then every call of the response
//! is answered in call order and the turn goes on.
//!
//! ```
//! use hpd_agent::approval::Approvals;
//! use hpd_agent::{AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let delete = Tool::new("delete", "Deletes a file", json!({"type": "object"}), |args, _| async move {
//!     ToolResult::ok(format!("deleted {}", args["path"].as_str().unwrap_or("?")))
//! })
//! .with_approval_required();
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "delete", r#"{"path": "a.txt"}"#)]),
//!     ChatResponse::text("Done."),
//! ]);
//! let agent = AgentBuilder::new()
//!     .with_harness(HarnessBuilder::new("Files").with_tool(delete).build()?)
//!     .with_chat_client(model.clone())
//!     .build()?;
//! let mut session = agent.session();
//! let paused = session.run("Delete a.txt").await?;
//! assert!(paused.is_paused());
//! assert_eq!(paused.pending_approvals[0].function, "delete");
//!
//! // Later, maybe in another process with the session loaded from a store:
//! let output = session.decide(Approvals::new().approve("c1")).await?;
//! assert_eq!(output.text, "Done.");
//! assert_eq!(model.requests()[1].tool_result("c1"), Some(("deleted a.txt", false)));
//! # Ok(())
//! # }
//! ```
//!
//! # What the model sees
//!
//! | decision | result text | error flag |
//! |---|---|---|
//! | approved | the function's own result | as the function sets it |
//! | approved with edited arguments | `The user edited the arguments before approving; the call ran with {arguments}` and a blank line before the function's result | as the function sets it |
//! | denied with a reason | `Function '{name}' was denied by the user: {reason}` | yes |
//! | denied without a reason | `Function '{name}' was denied by the user` | yes |
//!
//! The assistant message keeps the arguments the model sent; the edited ones are in the
//! result's note and in the session's approval log
//! ([`SessionState::approvals`](crate::agent::SessionState::approvals)).
//!
//! # Choices
//!
//! - While a session is paused it runs no new message:
//!   [`Session::run`](crate::Session::run) fails with [`ApprovalError::Pending`] and changes
//!   nothing. Its history ends with the assistant message whose calls wait; their results (and
//!   the results of the calls that ran) are added, in call order, when it resumes, so no
//!   request ever carries a tool call without its result.
//! - Every waiting call needs exactly one decision; a missing, unknown or duplicate call id, or
//!   edited arguments that are not a JSON object, fail [`Session::decide`](crate::Session::decide)
//!   with an [`ApprovalError`] before anything runs.
//! - A paused turn keeps its expansions (the turn is not over); scoped middleware is created
//!   afresh when it resumes in another process. The resumed part is bracketed by
//!   `before_message_turn` / `after_message_turn` as any run is (the paused part ended with
//!   [`TurnOutcome::Paused`](crate::middleware::TurnOutcome::Paused)), counts its iterations on from the
//!   paused one, and reports the usage of its own requests.
//! - Collapsing: a recovered call that is executed (`execute_recovered_calls`), a call made
//!   through the `fixed` layout's call tool and a call of a tool loaded by a native layout all
//!   resolve to the function they name, and need approval as a direct call does.
//! - Calls that need approval inside a sub-agent cannot pause the parent's run: the sub-agent's
//!   call gets an error result naming the function.
//! - A [`ToolSession`](crate::agent::ToolSession) has no run to pause: it asks its
//!   [`Approver`] ([`ToolSession::with_approver`](crate::agent::ToolSession::with_approver)); without
//!   one a call that needs approval is refused with an error result. The MCP server asks the
//!   MCP client through elicitation.
//! - Two processes resuming the same paused session at once both run the approved calls; the
//!   slower one's save fails with a [`StoreError::Conflict`](crate::store::StoreError::Conflict).
//!
//! # Deferred questions
//!
//! A function can ask the user something ([`FunctionContext::elicit`](crate::FunctionContext::elicit)),
//! and so can an MCP server through an [`McpHarness`](crate::mcp::McpHarness). The
//! application's [`ElicitationHandler`](crate::tool::ElicitationHandler) answers; when its
//! user is not there now it returns [`AskError::Deferred`](crate::tool::AskError::Deferred),
//! and the run pauses as it does for approval:
//!
//! - the call stops at the question; the other calls of the response finish, and the run
//!   returns `Ok` with [`RunOutput::pending_elicitations`](crate::RunOutput::pending_elicitations)
//!   listing the questions (call, function, harness, arguments, the [`Elicitation`]); each
//!   question is also an [`AgentEvent::QuestionDeferred`](crate::AgentEvent::QuestionDeferred),
//!   as a waiting approval is an [`AgentEvent::ApprovalRequested`](crate::AgentEvent::ApprovalRequested);
//! - the session is paused, with the questions saved in its state
//!   ([`PausedTurn::elicitations`], [`Session::pending_elicitations`](crate::Session::pending_elicitations)),
//!   so it can be saved and resumed by another process;
//! - [`Session::decide`](crate::Session::decide) with one answer per question
//!   ([`Approvals::answer`]; decisions too, when calls also wait for approval) goes on. Every
//!   answer is checked first: an accepted form's content must fit the form's schema, else
//!   [`ApprovalError::InvalidAnswer`] and the session stays paused as it was;
//! - the call then *runs again from its start*, and its asks get the answers they got before
//!   (by key) and the new one, so the function goes on past the question; it gets exactly
//!   one result, and the turn goes on. A function that asks should ask before it acts (its
//!   steps before the question run again), as on MCP 2026-07-28, where every round runs
//!   the function again. A later question of the same call may be deferred too: the run
//!   pauses again.
//!
//! Questions of an MCP server reached through an [`McpHarness`](crate::mcp::McpHarness):
//!
//! - **2026-07-28**: the question comes in an `input_required` round, which can be answered
//!   later. The round (its questions and the server's `requestState`) is saved with the
//!   pending question; when the session resumes the call is sent again with the answers and
//!   that request state. A server may refuse a request state that is too old (this crate's
//!   [`McpServer`](crate::mcp::McpServer) accepts one for 10 minutes): the call's result is
//!   then the server's error.
//! - **The session revisions** (2025-06-18, 2025-11-25): the question is a request of the
//!   server's that waits for its answer while the call runs and cannot outlive the process,
//!   so the run does not pause: the server gets an error saying the client deferred the
//!   question, and its function decides what its result is.
//!
//! Where nothing can wait for the answer (a sub-agent's run, a
//! [`ToolSession`](crate::agent::ToolSession)), the function gets
//! [`AskError::Deferred`](crate::tool::AskError::Deferred).

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::ask::{Answer, Elicitation, ElicitationAnswer};
use crate::chat::ChatMessage;

/// A call that waits for a person's decision.
///
/// ```
/// use hpd_agent::approval::PendingApproval;
///
/// let pending = PendingApproval::new("c1", "delete", "Files", r#"{"path":"a.txt"}"#);
/// assert_eq!(pending.arguments_json().unwrap()["path"], "a.txt");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingApproval {
    /// The id of the model's tool call.
    pub call_id: String,
    /// The canonical name of the function it runs (for a call through the `fixed` layout's call
    /// tool, or a qualified or recovered name, the function it resolved to).
    pub function: String,
    /// The harness the function belongs to.
    pub harness: String,
    /// The arguments text the model sent.
    pub arguments: String,
}

impl PendingApproval {
    /// A waiting call: the model's call id, the function and harness it runs, the arguments
    /// text the model sent. Runs make these; tests of an approver make them too.
    #[must_use]
    pub fn new(
        call_id: impl Into<String>,
        function: impl Into<String>,
        harness: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        PendingApproval {
            call_id: call_id.into(),
            function: function.into(),
            harness: harness.into(),
            arguments: arguments.into(),
        }
    }

    /// The arguments as JSON (`{}` for an empty, blank or `null` text).
    ///
    /// # Errors
    ///
    /// The model's text is not JSON.
    ///
    /// ```
    /// use hpd_agent::approval::PendingApproval;
    ///
    /// let pending = PendingApproval::new("c1", "f", "H", "");
    /// assert_eq!(pending.arguments_json().unwrap(), serde_json::json!({}));
    /// ```
    pub fn arguments_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        let text = self.arguments.trim();
        if text.is_empty() || text == "null" {
            return Ok(serde_json::Value::Object(serde_json::Map::new()));
        }
        serde_json::from_str(text)
    }
}

/// A call whose function asked the user something ([`FunctionContext::elicit`](crate::FunctionContext::elicit),
/// or an MCP server's question through an [`McpHarness`](crate::mcp::McpHarness) on
/// 2026-07-28) when the elicitation handler deferred it ([`AskError::Deferred`](crate::tool::AskError::Deferred)):
/// the run paused, and the call goes on when [`Session::decide`](crate::Session::decide) gets
/// the answer ([`Approvals::answer`]). See [deferred questions](self#deferred-questions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingElicitation {
    /// The id of the model's tool call.
    pub call_id: String,
    /// The canonical name of the function the call runs.
    pub function: String,
    /// The harness the function belongs to.
    pub harness: String,
    /// The arguments text the model sent.
    pub arguments: String,
    /// The question, with its key set (the function's, else `elicitation-{n}`).
    pub request: Elicitation,
    /// The answers of the call's earlier asks, by key: given again when the call goes on.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub(crate) answered: std::collections::BTreeMap<String, Answer>,
    /// The MCP `input_required` round the question came in, answered when the call goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) round: Option<serde_json::Value>,
}

impl PendingElicitation {
    /// The question's key.
    #[must_use]
    pub fn key(&self) -> &str {
        self.request.key.as_deref().unwrap_or("elicitation")
    }
}

/// A person's decision on one waiting call.
///
/// ```
/// use hpd_agent::approval::ApprovalDecision;
/// use serde_json::json;
///
/// assert!(ApprovalDecision::Approve.is_approved());
/// let edited = ApprovalDecision::edited(json!({"path": "b.txt"}));
/// assert_eq!(edited, ApprovalDecision::ApproveEdited { arguments: r#"{"path":"b.txt"}"#.into() });
/// assert!(!ApprovalDecision::deny("not now").is_approved());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalDecision {
    /// Run the call with the model's arguments.
    Approve,
    /// Run the call with these arguments (a JSON object text) instead of the model's.
    ApproveEdited {
        /// The arguments the call runs with.
        arguments: String,
    },
    /// Do not run the call; the model gets an error result that says so.
    Deny {
        /// Why, told to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl ApprovalDecision {
    /// Approve with edited arguments.
    ///
    /// ```
    /// use hpd_agent::approval::ApprovalDecision;
    ///
    /// let decision = ApprovalDecision::edited(serde_json::json!({"amount": 10}));
    /// assert!(decision.is_approved());
    /// ```
    #[must_use]
    pub fn edited(arguments: serde_json::Value) -> Self {
        ApprovalDecision::ApproveEdited {
            arguments: arguments.to_string(),
        }
    }

    /// Deny, with a reason the model reads.
    ///
    /// ```
    /// use hpd_agent::approval::ApprovalDecision;
    ///
    /// assert_eq!(ApprovalDecision::deny("too risky"), ApprovalDecision::Deny { reason: Some("too risky".into()) });
    /// ```
    #[must_use]
    pub fn deny(reason: impl Into<String>) -> Self {
        ApprovalDecision::Deny {
            reason: Some(reason.into()),
        }
    }

    /// Whether the call runs.
    ///
    /// ```
    /// use hpd_agent::approval::ApprovalDecision;
    ///
    /// assert!(!ApprovalDecision::Deny { reason: None }.is_approved());
    /// ```
    #[must_use]
    pub fn is_approved(&self) -> bool {
        !matches!(self, ApprovalDecision::Deny { .. })
    }

    /// The arguments the call runs with: the edited ones, or `requested` (the model's).
    ///
    /// ```
    /// use hpd_agent::approval::ApprovalDecision;
    ///
    /// assert_eq!(ApprovalDecision::Approve.arguments_for("{}"), "{}");
    /// assert_eq!(ApprovalDecision::edited(serde_json::json!({"a": 1})).arguments_for("{}"), r#"{"a":1}"#);
    /// ```
    #[must_use]
    pub fn arguments_for<'a>(&'a self, requested: &'a str) -> &'a str {
        match self {
            ApprovalDecision::ApproveEdited { arguments } => arguments,
            _ => requested,
        }
    }
}

/// The decisions for the calls of a paused session, by call id, for
/// [`Session::decide`](crate::Session::decide).
///
/// ```
/// use hpd_agent::approval::{ApprovalDecision, Approvals};
/// use serde_json::json;
///
/// let approvals = Approvals::new()
///     .approve("c1")
///     .approve_edited("c2", json!({"path": "b.txt"}))
///     .deny("c3", "keep the logs");
/// assert_eq!(approvals.get("c3"), Some(&ApprovalDecision::deny("keep the logs")));
/// assert_eq!(approvals.len(), 3);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvals {
    decisions: Vec<(String, ApprovalDecision)>,
    /// The user's answers to deferred questions, by call id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    answers: Vec<(String, ElicitationAnswer)>,
}

impl Approvals {
    /// No decisions yet.
    ///
    /// ```
    /// assert!(hpd_agent::approval::Approvals::new().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a decision for call `call_id`.
    ///
    /// ```
    /// use hpd_agent::approval::{ApprovalDecision, Approvals};
    ///
    /// let approvals = Approvals::new().decide("c1", ApprovalDecision::Deny { reason: None });
    /// assert!(!approvals.get("c1").unwrap().is_approved());
    /// ```
    #[must_use]
    pub fn decide(mut self, call_id: impl Into<String>, decision: ApprovalDecision) -> Self {
        self.decisions.push((call_id.into(), decision));
        self
    }

    /// Approves call `call_id` as the model asked.
    ///
    /// ```
    /// let approvals = hpd_agent::approval::Approvals::new().approve("c1");
    /// assert!(approvals.get("c1").unwrap().is_approved());
    /// ```
    #[must_use]
    pub fn approve(self, call_id: impl Into<String>) -> Self {
        self.decide(call_id, ApprovalDecision::Approve)
    }

    /// Approves call `call_id` with edited arguments (a JSON object).
    ///
    /// ```
    /// let approvals = hpd_agent::approval::Approvals::new().approve_edited("c1", serde_json::json!({"n": 2}));
    /// assert_eq!(approvals.get("c1").unwrap().arguments_for("{}"), r#"{"n":2}"#);
    /// ```
    #[must_use]
    pub fn approve_edited(self, call_id: impl Into<String>, arguments: serde_json::Value) -> Self {
        self.decide(call_id, ApprovalDecision::edited(arguments))
    }

    /// Denies call `call_id`, telling the model why.
    ///
    /// ```
    /// let approvals = hpd_agent::approval::Approvals::new().deny("c1", "no");
    /// assert!(!approvals.get("c1").unwrap().is_approved());
    /// ```
    #[must_use]
    pub fn deny(self, call_id: impl Into<String>, reason: impl Into<String>) -> Self {
        self.decide(call_id, ApprovalDecision::deny(reason))
    }

    /// Answers the deferred question of call `call_id` (see
    /// [deferred questions](self#deferred-questions)): the call goes on with this answer when
    /// the session resumes.
    ///
    /// ```
    /// use hpd_agent::approval::Approvals;
    /// use hpd_agent::tool::ElicitationAnswer;
    ///
    /// let approvals = Approvals::new().answer("c1", ElicitationAnswer::decline());
    /// assert_eq!(approvals.answer_of("c1"), Some(&ElicitationAnswer::decline()));
    /// assert_eq!(approvals.len(), 1);
    /// ```
    #[must_use]
    pub fn answer(mut self, call_id: impl Into<String>, answer: ElicitationAnswer) -> Self {
        self.answers.push((call_id.into(), answer));
        self
    }

    /// The answer for call `call_id`'s deferred question (the first one given).
    ///
    /// ```
    /// assert!(hpd_agent::approval::Approvals::new().answer_of("c1").is_none());
    /// ```
    #[must_use]
    pub fn answer_of(&self, call_id: &str) -> Option<&ElicitationAnswer> {
        self.answers
            .iter()
            .find(|(id, _)| id == call_id)
            .map(|(_, a)| a)
    }

    /// The decision for call `call_id` (the first one given).
    ///
    /// ```
    /// assert!(hpd_agent::approval::Approvals::new().get("c1").is_none());
    /// ```
    #[must_use]
    pub fn get(&self, call_id: &str) -> Option<&ApprovalDecision> {
        self.decisions
            .iter()
            .find(|(id, _)| id == call_id)
            .map(|(_, d)| d)
    }

    /// How many decisions and answers there are.
    ///
    /// ```
    /// assert_eq!(hpd_agent::approval::Approvals::new().approve("a").len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.decisions.len() + self.answers.len()
    }

    /// Whether there are none.
    ///
    /// ```
    /// assert!(!hpd_agent::approval::Approvals::new().approve("a").is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.decisions.is_empty() && self.answers.is_empty()
    }

    /// Checks the answers against the deferred questions: one each, no other ids, each fits
    /// its question (an accepted form's content matches the form's schema). Returns the
    /// answer of each question, in order.
    pub(crate) fn match_answers(
        &self,
        pending: &[PendingElicitation],
    ) -> Result<Vec<ElicitationAnswer>, ApprovalError> {
        let waiting = || {
            pending
                .iter()
                .map(|p| p.call_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (i, (id, _)) in self.answers.iter().enumerate() {
            if !pending.iter().any(|p| p.call_id == *id) {
                return Err(ApprovalError::UnknownCall {
                    call_id: id.clone(),
                    pending: waiting(),
                });
            }
            if self.answers[..i].iter().any(|(earlier, _)| earlier == id) {
                return Err(ApprovalError::DuplicateDecision {
                    call_id: id.clone(),
                });
            }
        }
        let unanswered: Vec<&str> = pending
            .iter()
            .filter(|p| self.answer_of(&p.call_id).is_none())
            .map(|p| p.call_id.as_str())
            .collect();
        if !unanswered.is_empty() {
            return Err(ApprovalError::Unanswered {
                calls: unanswered.join(", "),
            });
        }
        pending
            .iter()
            .map(|p| {
                let answer = self
                    .answer_of(&p.call_id)
                    .cloned()
                    .unwrap_or_else(ElicitationAnswer::cancel);
                crate::ask::check_answer(&p.request, &answer).map_err(|e| {
                    ApprovalError::InvalidAnswer {
                        call_id: p.call_id.clone(),
                        message: e.to_string(),
                    }
                })?;
                Ok(answer)
            })
            .collect()
    }

    /// Checks the decisions against the waiting calls: one each, no other ids, edited arguments
    /// that are JSON objects. Returns the decision of each waiting call, in order.
    pub(crate) fn match_pending(
        &self,
        pending: &[PendingApproval],
    ) -> Result<Vec<ApprovalDecision>, ApprovalError> {
        for (i, (id, _)) in self.decisions.iter().enumerate() {
            if !pending.iter().any(|p| p.call_id == *id) {
                return Err(ApprovalError::UnknownCall {
                    call_id: id.clone(),
                    pending: ids(pending),
                });
            }
            if self.decisions[..i].iter().any(|(earlier, _)| earlier == id) {
                return Err(ApprovalError::DuplicateDecision {
                    call_id: id.clone(),
                });
            }
        }
        let undecided: Vec<String> = pending
            .iter()
            .filter(|p| self.get(&p.call_id).is_none())
            .map(|p| p.call_id.clone())
            .collect();
        if !undecided.is_empty() {
            return Err(ApprovalError::Undecided {
                calls: undecided.join(", "),
            });
        }
        pending
            .iter()
            .map(|p| {
                let decision = self
                    .get(&p.call_id)
                    .cloned()
                    .unwrap_or(ApprovalDecision::Approve);
                if let ApprovalDecision::ApproveEdited { arguments } = &decision {
                    let parsed: Result<serde_json::Value, _> = serde_json::from_str(arguments);
                    match parsed {
                        Ok(serde_json::Value::Object(_)) => {}
                        Ok(_) => {
                            return Err(ApprovalError::InvalidArguments {
                                call_id: p.call_id.clone(),
                                message: "not a JSON object".to_owned(),
                            });
                        }
                        Err(e) => {
                            return Err(ApprovalError::InvalidArguments {
                                call_id: p.call_id.clone(),
                                message: e.to_string(),
                            });
                        }
                    }
                }
                Ok(decision)
            })
            .collect()
    }
}

fn ids(pending: &[PendingApproval]) -> String {
    pending
        .iter()
        .map(|p| p.call_id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One decision as the session's approval log keeps it
/// ([`SessionState::approvals`](crate::agent::SessionState::approvals)) and events report it.
///
/// ```
/// use hpd_agent::approval::{ApprovalDecision, ApprovalRecord, PendingApproval};
///
/// let pending = PendingApproval::new("c2", "delete", "Files", r#"{"path":"a.txt"}"#);
/// let record = ApprovalRecord::new(&pending, ApprovalDecision::edited(serde_json::json!({"path": "b.txt"})));
/// assert_eq!(record.arguments(), Some(r#"{"path":"b.txt"}"#));
/// assert!(record.edited());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalRecord {
    /// The id of the model's tool call.
    pub call_id: String,
    /// The function's canonical name.
    pub function: String,
    /// Its harness.
    pub harness: String,
    /// The arguments the model sent.
    pub requested_arguments: String,
    /// What the person decided.
    #[serde(flatten)]
    pub decision: ApprovalDecision,
}

impl ApprovalRecord {
    /// The record of `decision` on the waiting call `pending`.
    #[must_use]
    pub fn new(pending: &PendingApproval, decision: ApprovalDecision) -> Self {
        ApprovalRecord {
            call_id: pending.call_id.clone(),
            function: pending.function.clone(),
            harness: pending.harness.clone(),
            requested_arguments: pending.arguments.clone(),
            decision,
        }
    }

    /// The arguments the call ran with; `None` when it was denied.
    ///
    /// ```
    /// use hpd_agent::approval::{ApprovalDecision, ApprovalRecord, PendingApproval};
    ///
    /// let record = ApprovalRecord::new(&PendingApproval::new("c", "f", "H", "{}"), ApprovalDecision::deny("no"));
    /// assert_eq!(record.arguments(), None);
    /// ```
    #[must_use]
    pub fn arguments(&self) -> Option<&str> {
        self.decision
            .is_approved()
            .then(|| self.decision.arguments_for(&self.requested_arguments))
    }

    /// Whether the person edited the arguments.
    ///
    /// ```
    /// use hpd_agent::approval::{ApprovalDecision, ApprovalRecord, PendingApproval};
    ///
    /// let record = ApprovalRecord::new(&PendingApproval::new("c", "f", "H", "{}"), ApprovalDecision::Approve);
    /// assert!(!record.edited());
    /// ```
    #[must_use]
    pub fn edited(&self) -> bool {
        matches!(self.decision, ApprovalDecision::ApproveEdited { .. })
    }
}

/// A turn stopped before calls that need approval ran: what its resumption needs. Part of
/// [`SessionState`](crate::agent::SessionState), so it is saved with the session.
///
/// ```
/// use hpd_agent::{AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let pay = Tool::new("pay", "Pays", json!({"type": "object"}), |_, _| async { ToolResult::ok("paid") }).with_approval_required();
/// let look = Tool::new("balance", "The balance", json!({"type": "object"}), |_, _| async { ToolResult::ok("12 EUR") });
/// let model = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
///     ToolCall::new("c1", "balance", "{}"),
///     ToolCall::new("c2", "pay", r#"{"amount": 5}"#),
/// ])]);
/// let agent = AgentBuilder::new()
///     .with_harness(HarnessBuilder::new("Bank").with_tool(look).with_tool(pay).build()?)
///     .with_chat_client(model)
///     .build()?;
/// let mut session = agent.session();
/// session.run("Pay 5 EUR if I can").await?;
/// let paused = session.state().paused.as_ref().expect("paused");
/// assert_eq!(paused.pending()[0].call_id, "c2");
/// assert_eq!(paused.answered(), 1); // `balance` ran
/// // Saved and loaded like the rest of the state.
/// let json = serde_json::to_string(session.state())?;
/// assert!(json.contains(r#""paused":"#));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedTurn {
    /// The id of the turn (its functions' idempotency keys use it).
    pub(crate) turn_id: String,
    /// The user message that started the turn.
    pub(crate) user_message: String,
    /// The iteration whose response made the calls.
    pub(crate) iteration: usize,
    /// The waiting calls, in call order.
    pub(crate) pending: Vec<PendingApproval>,
    /// The calls whose deferred questions wait for an answer, in call order (none in
    /// sessions saved before questions could be deferred).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) elicitations: Vec<PendingElicitation>,
    /// Every call of the response, in call order: its result, or a place for a waiting one.
    pub(crate) slots: Vec<PausedSlot>,
}

/// One call of a paused response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "slot", rename_all = "snake_case")]
pub(crate) enum PausedSlot {
    /// Answered already: its tool message.
    Answered {
        /// The tool result message.
        message: ChatMessage,
    },
    /// The next call of `elicitations`: it ran until its question was deferred.
    Asking {
        /// The call's name as the model sent it, for events.
        name: String,
        /// Deferred tools its result loads (native layouts).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        references: Vec<String>,
        /// Container instructions its result carries.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        carried: Option<String>,
    },
    /// The next waiting call of `pending`.
    Waiting {
        /// The call's name as the model sent it (after the layout's call tool was unwrapped),
        /// for events.
        name: String,
        /// Deferred tools its result loads (native layouts).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        references: Vec<String>,
        /// Container instructions its result carries (every layout but `hide`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        carried: Option<String>,
    },
}

impl PausedTurn {
    /// The calls waiting for a decision, in call order.
    #[must_use]
    pub fn pending(&self) -> &[PendingApproval] {
        &self.pending
    }

    /// The calls whose deferred questions wait for an answer, in call order.
    #[must_use]
    pub fn elicitations(&self) -> &[PendingElicitation] {
        &self.elicitations
    }

    /// The id of the paused turn.
    #[must_use]
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The user message that started it.
    #[must_use]
    pub fn user_message(&self) -> &str {
        &self.user_message
    }

    /// How many calls of the response are answered already.
    #[must_use]
    pub fn answered(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| matches!(s, PausedSlot::Answered { .. }))
            .count()
    }
}

/// Asks a person whether a call may run, for callers that have no run to pause (a
/// [`ToolSession`](crate::agent::ToolSession), the MCP server).
///
/// ```
/// use hpd_agent::approval::{ApprovalDecision, Approver, PendingApproval};
/// use hpd_agent::async_trait;
///
/// /// Approves reads, denies everything else.
/// struct ReadsOnly;
///
/// #[async_trait]
/// impl Approver for ReadsOnly {
///     async fn decide(&self, call: &PendingApproval) -> Result<ApprovalDecision, String> {
///         Ok(if call.function.starts_with("read") { ApprovalDecision::Approve } else { ApprovalDecision::deny("only reads") })
///     }
/// }
/// # let _ = ReadsOnly;
/// ```
#[async_trait]
pub trait Approver: Send + Sync + 'static {
    /// The decision on `call`.
    ///
    /// # Errors
    ///
    /// Nobody can be asked: the text is the call's error result (the call does not run).
    async fn decide(&self, call: &PendingApproval) -> Result<ApprovalDecision, String>;
}

/// Why a paused session could not be resumed, or a message could not run.
///
/// ```
/// use hpd_agent::approval::{ApprovalError, Approvals};
/// use hpd_agent::{AgentBuilder, RunError, ScriptedChatClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
/// let error = agent.session().decide(Approvals::new()).await.unwrap_err();
/// assert!(matches!(error, RunError::Approval(ApprovalError::NotPaused)));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// A new message on a session paused for the answers to deferred questions (and perhaps
    /// decisions too).
    #[error(
        "the session is paused: calls {calls} wait for the user's answer to a question (or for approval); give them with Session::decide (Approvals::answer) before sending another message"
    )]
    Asking {
        /// The waiting call ids, comma-separated.
        calls: String,
    },
    /// Deferred questions without an answer.
    #[error(
        "no answer for the deferred questions of calls {calls}; every one needs an answer (Approvals::answer)"
    )]
    Unanswered {
        /// The call ids, comma-separated.
        calls: String,
    },
    /// An answer that does not fit its question: the session stays paused, nothing ran.
    #[error("the answer for call '{call_id}' does not fit its question: {message}")]
    InvalidAnswer {
        /// The call id.
        call_id: String,
        /// What is wrong.
        message: String,
    },
    /// `decide` on a session with no waiting calls.
    #[error("the session has no calls waiting for approval")]
    NotPaused,
    /// A new message on a paused session.
    #[error(
        "the session is paused: calls {calls} wait for approval; decide them with Session::decide before sending another message"
    )]
    Pending {
        /// The waiting call ids, comma-separated.
        calls: String,
    },
    /// Waiting calls without a decision.
    #[error("no decision for the waiting calls {calls}; every waiting call needs one")]
    Undecided {
        /// The call ids, comma-separated.
        calls: String,
    },
    /// A decision for a call that does not wait.
    #[error("no waiting call has the id '{call_id}'; the waiting calls are {pending}")]
    UnknownCall {
        /// The id given.
        call_id: String,
        /// The waiting call ids, comma-separated.
        pending: String,
    },
    /// Two decisions for one call.
    #[error("two decisions for call '{call_id}'; give one")]
    DuplicateDecision {
        /// The call id.
        call_id: String,
    },
    /// Edited arguments that are not a JSON object.
    #[error("the edited arguments of call '{call_id}' are not a JSON object: {message}")]
    InvalidArguments {
        /// The call id.
        call_id: String,
        /// What is wrong.
        message: String,
    },
    /// The function of a waiting call is not registered for the agent (or the run) that
    /// resumes it.
    #[error(
        "function '{function}' of harness '{harness}' (call '{call_id}') is not registered for this agent; resume with the agent and run config that paused the session"
    )]
    FunctionGone {
        /// The call id.
        call_id: String,
        /// The function name.
        function: String,
        /// Its harness.
        harness: String,
    },
}

/// The result text of a denied call.
pub(crate) fn denied_text(function: &str, reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("Function '{function}' was denied by the user: {reason}"),
        None => format!("Function '{function}' was denied by the user"),
    }
}

/// The result text of an approved call whose arguments were edited.
pub(crate) fn edited_text(arguments: &str, result: &str) -> String {
    format!(
        "The user edited the arguments before approving; the call ran with {arguments}\n\n{result}"
    )
}

/// The result text of a call that needs approval where nobody can be asked.
pub(crate) fn no_approver_text(function: &str) -> String {
    format!("Function '{function}' needs approval, and there is nobody to ask here")
}

impl fmt::Display for PendingApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}({})", self.harness, self.function, self.arguments)
    }
}
