//! The model loop of one turn.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt as _;
use tracing::Instrument as _;

use crate::approval::{
    ApprovalDecision, ApprovalError, ApprovalRecord, Approvals, PausedSlot, PausedTurn,
    PendingApproval, PendingElicitation, denied_text,
};
use crate::chat::{
    ChatMessage, ChatRequest, FinishReason, ModelOptions, ToolCall, ToolDefinition, Usage,
};
use crate::collapse::{Expansion, Target, Toolset, Unwrapped, tool_choice, with_section};
use crate::error::RunError;
use crate::events::{AgentEvent, Emitter};
use crate::middleware::pipeline::{
    CallScope, ScopedPipeline, announce_decision, approval_required, backward, forward, run_hooks,
};
use crate::middleware::{FunctionCall, IterationInfo, TurnInfo, TurnOutcome};
use crate::output::{DEFAULT_OUTPUT_RETRIES, Mismatch, OutputSchema, retry_message};
use crate::telemetry::{self, TurnTrace};
use crate::tool::{Answer, Asker, CallPause, ElicitationAnswer, PausingAsker, ToolResult};

use super::budget::{KnownPrompt, next_turn_start, summary_turn};
use super::builder::{split_pending, with_sub_agent_members};
use super::call::{self, CallRecord};
use super::registration::resolve;
use super::{AgentInner, AgentRunConfig, RunOutput, Session, TypedCheck};

/// What the `fixed` layout adds to a turn's user message when it opens containers ahead of the
/// model: this, the opened containers' names, then their answers, as a call of each would
/// have had them.
pub(crate) const OPENED_AHEAD: &str = "Opened for this message, so there is no need to call them: ";
/// What follows the opened containers' answers in the user's message: the user's own text
/// again.
const REQUEST_AGAIN: &str = "The request again: ";

/// The note of containers opened for the model (opening ahead, or `container_notes`): their
/// names, their answers, then the user's `message` again, so that the request, not the
/// schemas, is what the model reads last.
fn opened_note(names: &[&str], answers: &str, message: &str) -> String {
    format!(
        "{OPENED_AHEAD}{}.\n\n{answers}\n\n{REQUEST_AGAIN}{message}",
        names.join(", ")
    )
}

/// The text of calls left unanswered when middleware ends the run.
const ABORTED: &str = "Error: run aborted by middleware";
/// The text of calls left unanswered when the run is cancelled.
const CANCELLED: &str = "Error: run cancelled";

/// Mutable state of one turn.
struct Turn<'a> {
    agent: &'a AgentInner,
    tools: &'a Toolset,
    emitter: Emitter,
    cancellation: tokio_util::sync::CancellationToken,
    instructions: String,
    expansion: Expansion,
    history: &'a mut Vec<ChatMessage>,
    usage: Usage,
    /// The agent's model options with the run's merged over them.
    options: ModelOptions,
    /// Whether the model called a tool in this turn (forcing tool choices then stop).
    tool_called: bool,
    /// Why the model stopped its latest reply.
    finish_reason: FinishReason,
    /// The turn's id, which its functions see.
    turn_id: Arc<str>,
    /// The session's trimmed mark and summary (see `budget`).
    trimmed: &'a mut usize,
    summary: &'a mut Option<String>,
    /// The prompt tokens reported for the latest request.
    known: &'a mut Option<KnownPrompt>,
    /// Messages the budget removed from the history in this turn.
    dropped: &'a mut usize,
    /// Where this turn starts in the history: it is never trimmed.
    turn_start: usize,
    /// The session's approval log.
    approvals: &'a mut Vec<ApprovalRecord>,
    /// The schema the final answer must match, with the check of the Rust type (`run_typed`).
    output: Option<(OutputSchema, Option<TypedCheck>)>,
    /// How many times a mismatching answer is sent back.
    output_retries: usize,
    /// What the turn's spans share.
    trace: TurnTrace,
}

/// How a turn's model loop ended, when it did not fail.
enum Ended {
    /// The model answered with this text after this many requests (and, with an output
    /// schema, this checked JSON).
    Answered(String, usize, Option<serde_json::Value>),
    /// Calls wait for approval.
    Paused(PausedTurn),
}

/// What starts a run: a user message, or the decisions on a paused turn's calls.
pub(super) enum Start {
    Message(String),
    Resume(Approvals),
}

/// A paused turn, checked against the decisions and the tools, ready to go on.
struct Resume {
    paused: PausedTurn,
    /// One per waiting call, in order.
    decisions: Vec<ApprovalDecision>,
    /// One per waiting call, in order.
    targets: Vec<Target>,
    /// One per deferred question, in order.
    answers: Vec<ElicitationAnswer>,
    /// One per deferred question, in order.
    asking: Vec<Target>,
}

/// What a call that goes on after a deferred question replays: the answers of its asks by
/// key, and the MCP round the question came in.
struct Replay {
    answers: std::collections::BTreeMap<String, Answer>,
    round: Option<serde_json::Value>,
}

/// One call to run through the function pipeline.
struct Job<'j> {
    /// Where its result goes.
    slot: usize,
    target: Target,
    call_id: &'j str,
    arguments: &'j str,
    approval: Option<&'j ApprovalDecision>,
    /// What it replays, when it goes on after a deferred question.
    replay: Option<Replay>,
    /// The call's `tool_call` span.
    span: tracing::Span,
}

/// A call that waits for approval, from the resolution of a response.
struct Waiting {
    index: usize,
    target: Target,
    references: Vec<String>,
    carried: Option<String>,
}

/// The agent's toolset for this turn (hooks run, current tool lists), with the harnesses the
/// run config adds.
async fn turn_tools(
    agent: &AgentInner,
    config: &AgentRunConfig,
) -> Result<(Arc<Toolset>, Option<Toolset>), RunError> {
    let base = agent.tools.for_turn().await;
    if config.registrations.is_empty() {
        return Ok((base, None));
    }
    let mut resolved = Vec::new();
    for registration in config.registrations.merged() {
        if let Some(harness) = &registration.dynamic {
            harness.before_turn().await;
        }
        let harness = resolve(&registration)?;
        if base.admits(&harness.part)? {
            resolved.push(harness);
        }
    }
    let (parts, pending) = split_pending(resolved);
    let run_tools = base.as_ref().clone().with_parts(parts)?;
    let run_tools = with_sub_agent_members(run_tools, pending, &agent.client, agent.depth + 1)?;
    Ok((base, Some(run_tools)))
}

pub(super) async fn run_turn(
    agent: &AgentInner,
    session: &mut Session,
    start: Start,
    config: AgentRunConfig,
    trace: TurnTrace,
) -> Result<RunOutput, RunError> {
    if let (Start::Message(_), Some(paused)) = (&start, &session.state.paused) {
        if paused.elicitations.is_empty() {
            return Err(ApprovalError::Pending {
                calls: call_ids(&paused.pending),
            }
            .into());
        }
        return Err(ApprovalError::Asking {
            calls: waiting_ids(paused),
        }
        .into());
    }
    if let (Start::Resume(_), None) = (&start, &session.state.paused) {
        return Err(ApprovalError::NotPaused.into());
    }
    let (base, run_tools) = turn_tools(agent, &config).await?;
    let tools: &Toolset = run_tools.as_ref().unwrap_or(&base);
    telemetry::record_layout(tools.layout_name());
    let max_iterations = config.max_iterations.unwrap_or(agent.max_iterations);
    if max_iterations == 0 {
        return Err(RunError::Build(crate::BuildError::ZeroMaxIterations));
    }
    let instructions = match (agent.instructions.as_str(), config.additional_instructions) {
        (base, None) => base.to_owned(),
        ("", Some(extra)) => extra,
        (base, Some(extra)) => format!("{base}\n\n{extra}"),
    };
    let mut handlers = agent.handlers.clone();
    handlers.extend(config.handlers);
    let options = match &config.model_options {
        Some(run) => agent.model_options.merged_with(run),
        None => agent.model_options.clone(),
    };

    let (turn_info, turn_start, resume) = match start {
        Start::Message(message) => {
            let turn_info = TurnInfo {
                agent_name: agent.name.clone(),
                user_message: message.clone(),
            };
            let turn_start = session.state.history.len();
            session.state.history.push(ChatMessage::user(message));
            (turn_info, turn_start, None)
        }
        Start::Resume(approvals) => {
            let resume = check_resume(tools, session.state.paused.as_ref(), &approvals)?;
            session.state.paused = None;
            let turn_info = TurnInfo {
                agent_name: agent.name.clone(),
                user_message: resume.paused.user_message.clone(),
            };
            let turn_start = session
                .state
                .history
                .iter()
                .rposition(|m| matches!(m, ChatMessage::User { .. }))
                .unwrap_or(0);
            (turn_info, turn_start, Some(resume))
        }
    };

    let output = config
        .output
        .or_else(|| agent.output.clone())
        .map(|schema| (schema, config.typed));
    let output_retries = config
        .output_retries
        .or(agent.output_retries)
        .unwrap_or(DEFAULT_OUTPUT_RETRIES);

    let mut turn = Turn {
        agent,
        tools,
        emitter: Emitter::new(handlers),
        cancellation: config.cancellation.unwrap_or_default(),
        instructions,
        expansion: Expansion::new(
            std::mem::take(&mut session.state.expanded),
            std::mem::take(&mut session.pipelines),
        ),
        history: &mut session.state.history,
        trimmed: &mut session.state.trimmed,
        summary: &mut session.state.summary,
        known: &mut session.known_prompt,
        dropped: &mut session.dropped,
        turn_start,
        usage: Usage::default(),
        options,
        // A resumed turn has called a tool already: forcing tool choices are over.
        tool_called: resume.is_some(),
        finish_reason: if resume.is_some() {
            FinishReason::ToolCalls
        } else {
            FinishReason::default()
        },
        turn_id: match &resume {
            Some(resume) => resume.paused.turn_id.clone(),
            None => config.turn_id.unwrap_or_else(super::new_turn_id),
        }
        .into(),
        approvals: &mut session.state.approvals,
        output,
        output_retries,
        trace,
    };

    let outcome = match turn.expansion.start(tools) {
        Ok(()) => turn.iterate(&turn_info, max_iterations, resume).await,
        Err(e) => Err(e),
    };

    let usage = turn.usage;
    let finish_reason = turn.finish_reason.clone();
    telemetry::record_turn_usage(
        usage,
        &finish_reason,
        match &outcome {
            Ok(Ended::Answered(_, iterations, _)) => *iterations,
            Ok(Ended::Paused(paused)) => paused.iteration,
            Err(_) => 0,
        },
    );
    let after = {
        let outcome_view = match &outcome {
            Ok(Ended::Answered(text, _, _)) => TurnOutcome::Finished {
                text: text.as_str(),
                usage,
            },
            Ok(Ended::Paused(paused)) => TurnOutcome::Paused {
                pending: &paused.pending,
                usage,
            },
            Err(e) => TurnOutcome::Failed(e),
        };
        run_hooks(
            "after_message_turn",
            backward(&agent.middleware, &turn.expansion.pipelines),
            None,
            |m| m.after_message_turn(&turn_info, outcome_view),
        )
        .await
    };

    let Turn {
        expansion, emitter, ..
    } = turn;
    // A paused turn is not over: it keeps its expansions (and, in this process, its scoped
    // pipelines) until it resumes.
    let kept = match &outcome {
        Ok(Ended::Paused(_)) => expansion,
        _ => expansion.end_turn(&base),
    };
    session.state.expanded = kept.expanded;
    session.pipelines = kept.pipelines;
    emitter.emit(&AgentEvent::TurnFinished {
        usage,
        failed: outcome.is_err() || after.is_err(),
    });

    let ended = outcome?;
    after?;
    Ok(match ended {
        Ended::Answered(text, iterations, value) => RunOutput {
            text,
            usage,
            iterations,
            finish_reason,
            pending_approvals: Vec::new(),
            pending_elicitations: Vec::new(),
            value,
        },
        Ended::Paused(paused) => {
            let iterations = paused.iteration;
            let text = session
                .state
                .history
                .last()
                .and_then(|m| match m {
                    ChatMessage::Assistant { content, .. } => content.clone(),
                    _ => None,
                })
                .unwrap_or_default();
            let pending = paused.pending.clone();
            let elicitations = paused.elicitations.clone();
            session.state.paused = Some(paused);
            RunOutput {
                text,
                usage,
                iterations,
                finish_reason,
                pending_approvals: pending,
                pending_elicitations: elicitations,
                value: None,
            }
        }
    })
}

/// The ids of waiting calls, comma-separated.
fn call_ids(pending: &[PendingApproval]) -> String {
    pending
        .iter()
        .map(|p| p.call_id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The ids of every waiting call of a paused turn: the approvals', then the questions'.
fn waiting_ids(paused: &PausedTurn) -> String {
    paused
        .pending
        .iter()
        .map(|p| p.call_id.as_str())
        .chain(paused.elicitations.iter().map(|p| p.call_id.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks the decisions and answers against a paused turn and finds the function of every
/// waiting call.
fn check_resume(
    tools: &Toolset,
    paused: Option<&PausedTurn>,
    approvals: &Approvals,
) -> Result<Resume, RunError> {
    let paused = paused.ok_or(ApprovalError::NotPaused)?;
    let decisions = approvals.match_pending(&paused.pending)?;
    let answers = approvals.match_answers(&paused.elicitations)?;
    let target = |call_id: &str, harness: &str, function: &str| {
        tools
            .target_of(harness, function)
            .ok_or_else(|| ApprovalError::FunctionGone {
                call_id: call_id.to_owned(),
                function: function.to_owned(),
                harness: harness.to_owned(),
            })
    };
    let targets = paused
        .pending
        .iter()
        .map(|p| target(&p.call_id, &p.harness, &p.function))
        .collect::<Result<Vec<_>, _>>()?;
    let asking = paused
        .elicitations
        .iter()
        .map(|p| target(&p.call_id, &p.harness, &p.function))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Resume {
        paused: paused.clone(),
        decisions,
        targets,
        answers,
        asking,
    })
}

impl Turn<'_> {
    async fn iterate(
        &mut self,
        turn_info: &TurnInfo,
        max_iterations: usize,
        resume: Option<Resume>,
    ) -> Result<Ended, RunError> {
        let global = &self.agent.middleware;
        run_hooks(
            "before_message_turn",
            forward(global, &self.expansion.pipelines),
            Some(&self.cancellation),
            |m| m.before_message_turn(turn_info),
        )
        .await?;

        let mut first = 1;
        if resume.is_none() {
            self.open_ahead(&turn_info.user_message)?;
        }
        if let Some(resume) = resume {
            let iteration = resume.paused.iteration;
            first = iteration + 1;
            let info = IterationInfo {
                iteration,
                visible_tools: self
                    .tools
                    .visible(&self.expansion.expanded)
                    .iter()
                    .map(|t| t.name.clone())
                    .collect(),
            };
            if let Some(paused) = self.resume_calls(&info, resume).await? {
                return Ok(Ended::Paused(paused));
            }
            run_hooks(
                "after_iteration",
                backward(global, &self.expansion.pipelines),
                Some(&self.cancellation),
                |m| m.after_iteration(&info),
            )
            .await?;
        }

        // Requests that ask for a corrected answer do not count against `max_iterations`.
        let mut limit = max_iterations;
        let mut retries_left = self.output_retries;
        let mut iteration = first - 1;
        while iteration < limit {
            iteration += 1;
            let changed_options = self.request_options()?;
            let visible: Vec<Arc<ToolDefinition>> = self.tools.visible(&self.expansion.expanded);
            let info = IterationInfo {
                iteration,
                visible_tools: visible.iter().map(|t| t.name.clone()).collect(),
            };
            let instructions = self.expansion.instructions(self.tools, &self.instructions);
            self.emitter.emit(&AgentEvent::IterationStarted {
                iteration,
                visible_tools: info.visible_tools.clone(),
            });
            run_hooks(
                "before_iteration",
                forward(global, &self.expansion.pipelines),
                Some(&self.cancellation),
                |m| m.before_iteration(&info),
            )
            .await?;

            let emitter = self.emitter.clone();
            let sink = move |text: &str| {
                if emitter.is_listening() {
                    emitter.emit(&AgentEvent::TextDelta {
                        text: text.to_owned(),
                    });
                }
            };
            let fixed = self.fit_budget(&instructions, &visible).await?;
            let options = changed_options.as_ref().unwrap_or(&self.options);
            let start = (*self.trimmed).min(self.history.len());
            let with_summary: Vec<ChatMessage>;
            let messages: &[ChatMessage] = match self.summary.as_deref() {
                Some(summary) => {
                    with_summary = summary_turn(summary)
                        .into_iter()
                        .chain(self.history[start..].iter().cloned())
                        .collect();
                    &with_summary
                }
                None => &self.history[start..],
            };
            let sent_len = self.history.len();
            let request = ChatRequest::new(&instructions, messages, &visible)
                .with_deferred(self.tools.deferred())
                .with_tool_search(self.tools.tool_search())
                .with_options(options)
                .with_output(self.output.as_ref().map(|(schema, _)| schema));
            let span = telemetry::chat_span(
                self.agent.client.model_info(),
                &self.trace,
                iteration,
                &request,
            );
            let response = tokio::select! {
                biased;
                () = self.cancellation.cancelled() => {
                    telemetry::record_cancelled(&span);
                    return Err(RunError::Cancelled);
                }
                response = self
                    .agent
                    .client
                    .complete(request, &sink)
                    .instrument(span.clone()) => response,
            };
            telemetry::record_chat(&span, response.as_ref(), self.trace.content);
            drop(span);
            let response = response?;
            self.usage += response.usage;
            if let Some(fixed) = fixed {
                *self.known = usize::try_from(response.usage.input_tokens)
                    .ok()
                    .filter(|&tokens| tokens > 0)
                    .map(|tokens| KnownPrompt {
                        trimmed: *self.trimmed,
                        sent_len,
                        fixed,
                        tokens,
                    });
            }
            self.history.push(ChatMessage::assistant(&response));
            self.finish_reason = response.finish_reason.clone();
            if !matches!(
                response.finish_reason,
                FinishReason::Stop | FinishReason::ToolCalls
            ) {
                self.emitter.emit(&AgentEvent::ResponseIncomplete {
                    iteration,
                    finish_reason: response.finish_reason.clone(),
                    has_tool_calls: !response.tool_calls.is_empty(),
                });
            }
            self.tool_called |= !response.tool_calls.is_empty();

            let answered = response.tool_calls.is_empty();
            if !answered
                && let Some(mut paused) = self
                    .handle_calls(&info, &response.tool_calls, &turn_info.user_message)
                    .await?
            {
                paused.user_message.clone_from(&turn_info.user_message);
                return Ok(Ended::Paused(paused));
            }
            run_hooks(
                "after_iteration",
                backward(global, &self.expansion.pipelines),
                Some(&self.cancellation),
                |m| m.after_iteration(&info),
            )
            .await?;
            if answered {
                let text = response.text.unwrap_or_default();
                let Some((schema, typed)) = &self.output else {
                    return Ok(Ended::Answered(text, iteration, None));
                };
                let attempts = self.output_retries - retries_left + 1;
                let mismatch = match checked(schema, *typed, &text) {
                    Ok(value) => return Ok(Ended::Answered(text, iteration, Some(value))),
                    // A refusal is not corrected by asking again.
                    Err(_) if response.finish_reason == FinishReason::ContentFilter => {
                        let refused = Mismatch {
                            path: String::new(),
                            message: "the model refused to answer".to_owned(),
                        };
                        return Err(schema.error(&text, refused, attempts).into());
                    }
                    Err(mismatch) => mismatch,
                };
                self.emitter.emit(&AgentEvent::OutputRejected {
                    iteration,
                    path: mismatch.path.clone(),
                    message: mismatch.message.clone(),
                    retrying: retries_left > 0,
                });
                if retries_left == 0 {
                    return Err(schema.error(&text, mismatch, attempts).into());
                }
                retries_left -= 1;
                limit += 1;
                self.history.push(ChatMessage::user(retry_message(
                    &mismatch.path,
                    &mismatch.message,
                )));
            }
        }
        Err(RunError::MaxIterations(max_iterations))
    }

    /// Trims the oldest whole turns from the request until it fits the agent's budget (turns
    /// before this one only), replacing them with a summary when the agent has a summarizer.
    /// Returns the estimate of the request's parts besides its messages, `None` without a
    /// budget.
    async fn fit_budget(
        &mut self,
        instructions: &str,
        tools: &[Arc<ToolDefinition>],
    ) -> Result<Option<usize>, RunError> {
        let Some(budgeting) = &self.agent.budgeting else {
            return Ok(None);
        };
        let mut trimmed = (*self.trimmed).min(self.turn_start);
        let mut summary = self.summary.clone();
        let mut fixed = budgeting.fixed_tokens(instructions, tools, summary.as_deref());
        let known = *self.known;
        loop {
            if budgeting.fits(
                self.history,
                trimmed,
                fixed,
                summary.is_some(),
                known,
                false,
            ) {
                break;
            }
            // The oldest turns leave until the rest fits three quarters of the budget (or only
            // this turn is left: it is sent as it is).
            let mut target = trimmed;
            while !budgeting.fits(self.history, target, fixed, summary.is_some(), known, true) {
                match next_turn_start(self.history, target, self.turn_start) {
                    Some(next) => target = next,
                    None => break,
                }
            }
            if target == trimmed {
                break;
            }
            let Some(summarizer) = &budgeting.summarizer else {
                trimmed = target;
                break;
            };
            // The summary grows with the turns it covers: check again with the new one.
            let text = summarizer
                .summarize(summary.as_deref(), &self.history[trimmed..target])
                .await
                .map_err(RunError::Summarizer)?;
            summary = Some(text);
            fixed = budgeting.fixed_tokens(instructions, tools, summary.as_deref());
            trimmed = target;
        }
        if trimmed != *self.trimmed {
            tracing::debug!(
                target: "hpd_agent",
                trimmed,
                of = self.history.len(),
                "trimmed the oldest turns to fit the context budget"
            );
        }
        *self.summary = summary;
        if budgeting.budget.drop_trimmed && trimmed > 0 {
            self.history.drain(..trimmed);
            *self.dropped += trimmed;
            self.turn_start -= trimmed;
            *self.known = None;
            trimmed = 0;
        }
        *self.trimmed = trimmed;
        Ok(Some(fixed))
    }

    /// The options of the next request: the turn's, with the tool choice resolved against the
    /// tools (which may expand a container first, as recovery would).
    /// `None` when they are the turn's options unchanged.
    fn request_options(&mut self) -> Result<Option<ModelOptions>, RunError> {
        let resolved = tool_choice::resolve(
            self.tools,
            &self.expansion.expanded,
            self.options.tool_choice.as_ref(),
            self.tool_called,
        )?;
        if let Some(h) = resolved.expand
            && self.expansion.expand(self.tools, h)?
        {
            self.emitter.emit(&AgentEvent::ContainerExpanded {
                harness: self.tools.groups()[h].name.to_string(),
                recovery: true,
            });
        }
        if resolved.choice == self.options.tool_choice {
            return Ok(None);
        }
        let mut options = self.options.clone();
        options.tool_choice = resolved.choice;
        Ok(Some(options))
    }

    /// Opens the containers that the turn's `message` ranks high enough (the `open_ahead`
    /// setting), before the turn's first request. In `fixed` the containers' answers, and for
    /// each the member that fits the message best with the call that runs it, are added to the
    /// turn's user message, after [`OPENED_AHEAD`] and their names, and followed by the user's
    /// text again: a model shown a container call it did not make tends to make it
    /// again (see the `open_ahead` module).
    /// In `native` (tool references or additions) the opening is what the model's own
    /// container calls would have been: an assistant message calling them and each one's result, since
    /// the references ride on the result. Each opening reports `ContainerExpanded` (not a
    /// recovery).
    ///
    /// # Errors
    ///
    /// A scoped middleware of an opened harness could not be created.
    fn open_ahead(&mut self, message: &str) -> Result<(), RunError> {
        let tools = self.tools;
        // Off, or a layout or toolset that cannot open anything (collapsing off, no container,
        // `hide`, `append`, the Responses namespaces): no pass over the history at every turn's
        // start.
        if !tools.may_open_ahead() {
            return Ok(());
        }
        let sent = (*self.trimmed).min(self.history.len());
        let delivered = tools.delivered(&self.history[sent..]);
        let opening = tools.open_ahead(message, &self.expansion.expanded, &delivered);
        if opening.is_empty() {
            return Ok(());
        }
        let seen = self.expansion.expanded.clone();
        // Ids no model call of the session can have taken: the history's length is new at
        // every opening.
        let at = self.history.len();
        let mut calls = Vec::with_capacity(opening.len());
        // Each container's answer, with its harness.
        let mut results = Vec::with_capacity(opening.len());
        let mut hints = Vec::new();
        for (i, h) in opening.into_iter().enumerate() {
            let call = ToolCall::new(
                format!("hpd_open_{at}_{i}"),
                tools.groups()[h].name.to_string(),
                "{}",
            );
            let (resolved, _) = call::route(
                &mut self.expansion,
                tools,
                &call.name,
                &seen,
                &delivered,
                &self.emitter,
            )?;
            // A container's name is always answered: the routing expanded it.
            if let call::Resolved::Answered(answer) = resolved {
                let mut result = ChatMessage::tool_result(
                    call.id.clone(),
                    answer.result.limited(&self.agent.limits),
                );
                if let ChatMessage::Tool { references, .. } = &mut result {
                    *references = answer.references;
                }
                calls.push(call);
                results.push((h, result));
                hints.extend(tools.member_hint(h, message, &delivered));
            }
        }
        if calls.is_empty() {
            return Ok(());
        }
        if tools.opens_ahead_in_a_note()
            && let Some(ChatMessage::User { content }) = self.history.last_mut()
        {
            let names: Vec<&str> = calls.iter().map(|call| call.name.as_str()).collect();
            let answers: Vec<String> = results
                .into_iter()
                .filter_map(|(h, result)| match result {
                    ChatMessage::Tool { content, .. } => Some(tools.note_answer(h, content)),
                    _ => None,
                })
                .chain(hints)
                .collect();
            let note = opened_note(&names, &answers.join("\n\n"), content);
            content.push_str("\n\n");
            content.push_str(&note);
        } else {
            self.history
                .push(ChatMessage::assistant(&crate::ChatResponse::tool_calls(
                    calls,
                )));
            self.history
                .extend(results.into_iter().map(|(_, result)| result));
        }
        Ok(())
    }

    /// Resolves and runs the calls of one response and appends a result for every call, in
    /// call order, whatever happens; or, when calls wait for approval, runs the others and
    /// returns the paused turn (nothing is appended then: the results go into it).
    async fn handle_calls(
        &mut self,
        info: &IterationInfo,
        calls: &[ToolCall],
        message: &str,
    ) -> Result<Option<PausedTurn>, RunError> {
        let mut records: Vec<CallRecord> = Vec::with_capacity(calls.len());
        records.resize_with(calls.len(), CallRecord::default);
        // Calls of the layout's own tools stand for the calls they name from here on: events,
        // middleware, limits and results see those.
        let unwrapped = admit_calls(self.tools, &self.agent.limits, calls, &mut records);
        let calls: &[ToolCall] = unwrapped.as_deref().unwrap_or(calls);
        let spans: Vec<tracing::Span> = calls
            .iter()
            .map(|call| telemetry::tool_span(call, &self.trace))
            .collect();
        let outcome = self
            .resolve_and_run(info, calls, &mut records, &spans)
            .await;
        let filler = match &outcome {
            Err(RunError::Cancelled) => CANCELLED,
            _ => ABORTED,
        };
        let filler_type = match &outcome {
            Err(RunError::Cancelled) => "cancelled",
            _ => "aborted",
        };
        let finished = |i: usize, record: &CallRecord, filled: &ToolResult| {
            let error_type = if record.result.is_none() {
                Some(filler_type)
            } else {
                record.error_type
            };
            telemetry::record_tool_result(&spans[i], filled, error_type, self.trace.content);
        };
        if let Ok(waiting) = &outcome
            && (!waiting.is_empty() || records.iter().any(|r| r.deferred.is_some()))
        {
            let mut waiting = outcome.unwrap_or_default().into_iter().peekable();
            let mut pending = Vec::new();
            let mut elicitations = Vec::new();
            let mut slots = Vec::with_capacity(calls.len());
            for (i, (call, mut record)) in calls.iter().zip(records).enumerate() {
                if let Some((deferred, target)) = record.deferred.take() {
                    elicitations.push(self.pending_elicitation(
                        &call.id,
                        target,
                        &call.arguments,
                        deferred,
                    ));
                    slots.push(PausedSlot::Asking {
                        name: call.name.clone(),
                        references: record.references,
                        carried: record.carried,
                    });
                    continue;
                }
                if let Some(wait) = waiting.next_if(|w| w.index == i) {
                    telemetry::record_approval(&spans[i], "pending");
                    let function = self.tools.function(wait.target);
                    self.emitter.emit(&AgentEvent::ApprovalRequested {
                        call_id: call.id.clone(),
                        name: function.name().to_owned(),
                        harness: function.harness_name().to_owned(),
                        arguments: call.arguments.clone(),
                    });
                    pending.push(PendingApproval {
                        call_id: call.id.clone(),
                        function: function.name().to_owned(),
                        harness: function.harness_name().to_owned(),
                        arguments: call.arguments.clone(),
                    });
                    slots.push(PausedSlot::Waiting {
                        name: call.name.clone(),
                        references: wait.references,
                        carried: wait.carried,
                    });
                    continue;
                }
                let filled = record
                    .result
                    .clone()
                    .unwrap_or_else(|| ToolResult::error(filler));
                finished(i, &record, &filled);
                let message = self.tool_message(&call.id, &call.name, filled, record);
                slots.push(PausedSlot::Answered { message });
            }
            return Ok(Some(PausedTurn {
                turn_id: self.turn_id.to_string(),
                user_message: String::new(),
                iteration: info.iteration,
                pending,
                elicitations,
                slots,
            }));
        }
        let note = outcome.is_ok()
            && self.tools.answers_in_a_note()
            && records.iter().all(|r| r.container_answer.is_some());
        let mut harnesses: Vec<usize> = Vec::new();
        let mut answers = Vec::new();
        for (i, (call, record)) in calls.iter().zip(records).enumerate() {
            let filled = record
                .result
                .clone()
                .unwrap_or_else(|| ToolResult::error(filler));
            finished(i, &record, &filled);
            let container = record.container_answer;
            if note
                && let Some(h) = container
                && !harnesses.contains(&h)
            {
                harnesses.push(h);
            }
            let message = self.tool_message(&call.id, &call.name, filled, record);
            match (message, container) {
                (ChatMessage::Tool { content, .. }, Some(h)) if note => {
                    answers.push(self.tools.note_answer(h, content));
                }
                (message, _) => self.history.push(message),
            }
        }
        if note {
            self.note_answers(&harnesses, &answers, message);
        }
        outcome.map(|_| None)
    }

    /// Writes the layout's answers to a response whose calls were all container calls as one
    /// note in the user's turn (the `container_notes` setting): the response keeps its text
    /// only (it is left out when it has none), and the note names the containers, gives their
    /// answers and the member of each that fits the message best with the call that runs it
    /// (with its schema, for a container called again), names another container when it fits
    /// the message clearly better than those opened ([`Toolset::better_container`]), and
    /// repeats the turn's user `message`, as opening ahead writes it.
    fn note_answers(&mut self, harnesses: &[usize], answers: &[String], message: &str) {
        let tools = self.tools;
        // What the conversation showed before these answers: a container whose every schema
        // it holds was called again, and its hint carries the member's schema.
        let sent = (*self.trimmed).min(self.history.len());
        let delivered = tools.delivered(&self.history[sent..]);
        let mut hints: Vec<String> = harnesses
            .iter()
            .filter_map(|&h| tools.member_hint(h, message, &delivered))
            .collect();
        hints.extend(tools.better_container(
            harnesses,
            message,
            &self.expansion.expanded,
            &delivered,
        ));
        let names: Vec<&str> = harnesses
            .iter()
            .map(|&h| &*tools.groups()[h].name)
            .collect();
        let mut answers = answers.join("\n\n");
        for hint in hints {
            answers.push_str("\n\n");
            answers.push_str(&hint);
        }
        if let Some(ChatMessage::Assistant { content, .. }) = self.history.pop()
            && let Some(text) = content.filter(|text| !text.trim().is_empty())
        {
            self.history.push(ChatMessage::Assistant {
                content: Some(text),
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
            });
        }
        self.history
            .push(ChatMessage::user(opened_note(&names, &answers, message)));
    }

    /// The tool message of one call's result (cut to the limit), reported as finished; the
    /// references and the duration come from its record.
    fn tool_message(
        &self,
        call_id: &str,
        name: &str,
        result: ToolResult,
        record: CallRecord,
    ) -> ChatMessage {
        let result = call::finish(
            &self.emitter,
            &self.agent.limits,
            call_id,
            name,
            result,
            self.emitter.sees_tool_calls().then_some(record.duration),
        );
        let mut message = ChatMessage::tool_result(call_id, result);
        if let ChatMessage::Tool { references, .. } = &mut message {
            *references = record.references;
        }
        message
    }

    /// Goes on with a paused turn: tells middleware and events the decisions, runs the approved
    /// calls and the calls whose questions got their answers, answers the denied ones, and
    /// appends every result of the paused response in call order, whatever happens; or, when
    /// a call's question is deferred again, returns the turn paused anew (nothing appended).
    async fn resume_calls(
        &mut self,
        info: &IterationInfo,
        resume: Resume,
    ) -> Result<Option<PausedTurn>, RunError> {
        let Resume {
            paused,
            decisions,
            targets,
            answers,
            asking,
        } = resume;
        let approvals = paused.pending.len();
        let count = approvals + paused.elicitations.len();
        let mut records: Vec<CallRecord> = Vec::with_capacity(count);
        records.resize_with(count, CallRecord::default);
        // The waiting calls (id, function, harness, arguments): the approvals', then the
        // questions'.
        let calls: Vec<[&str; 4]> = paused
            .pending
            .iter()
            .map(|p| [&*p.call_id, &*p.function, &*p.harness, &*p.arguments])
            .chain(
                paused
                    .elicitations
                    .iter()
                    .map(|p| [&*p.call_id, &*p.function, &*p.harness, &*p.arguments]),
            )
            .collect();
        // The calls run in this turn's trace, each in a span of its own.
        let spans: Vec<tracing::Span> = calls
            .iter()
            .map(|&[call_id, function, harness, arguments]| {
                let call = ToolCall::new(call_id, function, arguments);
                let span = telemetry::tool_span(&call, &self.trace);
                telemetry::record_tool(&span, function, Some(harness));
                span
            })
            .collect();
        let outcome = self
            .decide_and_run(
                info,
                &paused,
                (&decisions, &targets),
                (&answers, &asking),
                &mut records,
                &spans,
            )
            .await;
        let again = outcome.is_ok() && records.iter().any(|r| r.deferred.is_some());
        let mut slots = Vec::new();
        let mut elicitations = Vec::new();
        let (mut next_approval, mut next_question) = (0, approvals);
        for slot in paused.slots {
            let (k, name, references, carried) = match slot {
                PausedSlot::Answered { message } => {
                    if again {
                        slots.push(PausedSlot::Answered { message });
                    } else {
                        self.history.push(message);
                    }
                    continue;
                }
                PausedSlot::Waiting {
                    name,
                    references,
                    carried,
                } => {
                    next_approval += 1;
                    (next_approval - 1, name, references, carried)
                }
                PausedSlot::Asking {
                    name,
                    references,
                    carried,
                } => {
                    next_question += 1;
                    (next_question - 1, name, references, carried)
                }
            };
            let (Some(record), Some(&[call_id, _, _, arguments])) =
                (records.get_mut(k), calls.get(k))
            else {
                continue;
            };
            let mut record = std::mem::take(record);
            if again && let Some((deferred, target)) = record.deferred.take() {
                // An approved call runs on with the arguments it was approved with.
                let ran_with = decisions
                    .get(k)
                    .map_or(arguments, |d| d.arguments_for(arguments));
                elicitations.push(self.pending_elicitation(call_id, target, ran_with, deferred));
                slots.push(PausedSlot::Asking {
                    name,
                    references,
                    carried,
                });
                continue;
            }
            let message = self.resumed_message(
                call_id,
                &name,
                record,
                (references, carried),
                &outcome,
                &spans[k],
            );
            if again {
                slots.push(PausedSlot::Answered { message });
            } else {
                self.history.push(message);
            }
        }
        if again {
            return Ok(Some(PausedTurn {
                turn_id: paused.turn_id,
                user_message: paused.user_message,
                iteration: paused.iteration,
                pending: Vec::new(),
                elicitations,
                slots,
            }));
        }
        outcome.map(|()| None)
    }

    /// The tool message of a resumed call: its result (or the run's filler when it has none),
    /// with the references and the container instructions its place in the paused response
    /// kept.
    fn resumed_message(
        &self,
        call_id: &str,
        name: &str,
        mut record: CallRecord,
        (references, carried): (Vec<String>, Option<String>),
        outcome: &Result<(), RunError>,
        span: &tracing::Span,
    ) -> ChatMessage {
        let (filler, error_type) = match outcome {
            Err(RunError::Cancelled) => (CANCELLED, "cancelled"),
            _ => (ABORTED, "aborted"),
        };
        let unanswered = record.result.is_none();
        let mut result = record
            .result
            .take()
            .unwrap_or_else(|| ToolResult::error(filler));
        telemetry::record_tool_result(
            span,
            &result,
            unanswered.then_some(error_type),
            self.trace.content,
        );
        if result.is_error && result.text == filler {
            // Unanswered: nothing to carry.
        } else if result.parts.is_empty() {
            result.text = with_section(std::mem::take(&mut result.text), carried);
        } else if let Some(section) = carried {
            // A result with parts carries the section as one more text part.
            result = result.with_part(crate::chat::ContentPart::text(section));
        }
        // The deferred tools its container loaded when the call was routed.
        record.references = references;
        self.tool_message(call_id, name, result, record)
    }

    /// The saved form of a question the handler deferred in call `call_id` of `target`, which
    /// ran with `arguments`.
    fn pending_elicitation(
        &self,
        call_id: &str,
        target: Target,
        arguments: &str,
        deferred: crate::tool::Deferred,
    ) -> PendingElicitation {
        let function = self.tools.function(target);
        self.emitter.emit(&AgentEvent::QuestionDeferred {
            call_id: call_id.to_owned(),
            name: function.name().to_owned(),
            harness: function.harness_name().to_owned(),
            question: deferred.request.clone(),
        });
        PendingElicitation {
            call_id: call_id.to_owned(),
            function: function.name().to_owned(),
            harness: function.harness_name().to_owned(),
            arguments: arguments.to_owned(),
            request: deferred.request,
            answered: deferred.answered,
            round: deferred.round,
        }
    }

    /// [`resume_calls`](Self::resume_calls) without the appending: the hooks, the events, the
    /// log and the runs.
    // The records and spans are per waiting call: the approvals', then the questions'.
    async fn decide_and_run(
        &mut self,
        info: &IterationInfo,
        paused: &PausedTurn,
        (decisions, targets): (&[ApprovalDecision], &[Target]),
        (answers, asking): (&[ElicitationAnswer], &[Target]),
        records: &mut [CallRecord],
        spans: &[tracing::Span],
    ) -> Result<(), RunError> {
        let global = &self.agent.middleware;
        let tools = self.tools;
        let pending = &paused.pending;
        let mut jobs = Vec::new();
        for (k, ((pending, decision), &target)) in
            pending.iter().zip(decisions).zip(targets).enumerate()
        {
            let function = tools.function(target);
            announce_decision(
                global,
                self.expansion.pipeline(tools, target).map(Arc::as_ref),
                function,
                &pending.call_id,
                &pending.arguments,
                Some(&self.turn_id),
                decision,
            )
            .await?;
            let record = ApprovalRecord {
                call_id: pending.call_id.clone(),
                function: pending.function.clone(),
                harness: pending.harness.clone(),
                requested_arguments: pending.arguments.clone(),
                decision: decision.clone(),
            };
            self.emitter.emit(&AgentEvent::ApprovalDecided {
                record: record.clone(),
            });
            self.approvals.push(record);
            telemetry::record_approval(
                &spans[k],
                match decision {
                    ApprovalDecision::Approve => "approved",
                    ApprovalDecision::ApproveEdited { .. } => "edited",
                    ApprovalDecision::Deny { .. } => "denied",
                },
            );
            match decision {
                ApprovalDecision::Deny { reason } => {
                    records[k].result = Some(ToolResult::error(denied_text(
                        function.name(),
                        reason.as_deref(),
                    )));
                }
                _ => jobs.push(Job {
                    slot: k,
                    target,
                    call_id: &pending.call_id,
                    arguments: decision.arguments_for(&pending.arguments),
                    approval: Some(decision),
                    replay: None,
                    span: spans[k].clone(),
                }),
            }
        }
        // The calls whose questions got their answers run again, replaying their asks.
        for (j, ((question, answer), &target)) in paused
            .elicitations
            .iter()
            .zip(answers)
            .zip(asking)
            .enumerate()
        {
            let mut replayed = question.answered.clone();
            replayed.insert(
                question.key().to_owned(),
                Answer::Elicitation(answer.clone()),
            );
            jobs.push(Job {
                slot: pending.len() + j,
                target,
                call_id: &question.call_id,
                arguments: &question.arguments,
                approval: None,
                replay: Some(Replay {
                    answers: replayed,
                    round: question.round.clone(),
                }),
                span: spans[pending.len() + j].clone(),
            });
        }
        self.batch_hooks(info, &jobs).await?;
        self.execute(&jobs, records).await
    }

    /// `before_parallel_batch`, when two or more calls are about to run.
    async fn batch_hooks(&self, info: &IterationInfo, jobs: &[Job<'_>]) -> Result<(), RunError> {
        if jobs.len() < 2 {
            return Ok(());
        }
        let tools = self.tools;
        let batch: Vec<FunctionCall> = jobs
            .iter()
            .map(|job| {
                let function = tools.function(job.target);
                let mut call = FunctionCall::new(
                    job.call_id.to_owned(),
                    function.name(),
                    function.harness_name(),
                    job.arguments.to_owned(),
                );
                call.approval = job.approval.cloned();
                call
            })
            .collect();
        let owning: Vec<Arc<ScopedPipeline>> = self
            .expansion
            .pipelines
            .iter()
            .filter(|p| {
                jobs.iter().any(|job| {
                    tools
                        .owner(job.target)
                        .is_some_and(|h| tools.groups()[h].name == p.harness)
                })
            })
            .cloned()
            .collect();
        run_hooks(
            "before_parallel_batch",
            forward(&self.agent.middleware, &owning),
            Some(&self.cancellation),
            |m| m.before_parallel_batch(info, &batch),
        )
        .await
    }

    /// Runs the jobs through the function pipeline, at most `max_parallel_calls` at once, into
    /// their records (the result, and the run's time added to the duration).
    ///
    /// # Errors
    ///
    /// The first error of a job in job order (cancelled, a hook failed); the other jobs still
    /// finish into their records.
    async fn execute(&self, jobs: &[Job<'_>], records: &mut [CallRecord]) -> Result<(), RunError> {
        let global = &self.agent.middleware;
        let tools = self.tools;
        // Sub-agents forward their events through it, and functions report progress and log
        // through it; with nobody listening there is nothing to build.
        let events = self.emitter.call_sink();
        let handlers = Arc::clone(&self.agent.asks) as Arc<dyn Asker>;
        // Only a top-level run can pause for a deferred question: nothing would resume a
        // sub-agent's.
        let pausing = self.agent.depth == 0;
        let expansion = &self.expansion;
        // Collected first: a lazy iterator inside the stream trips the `Send` check of the
        // run's future.
        let executions: Vec<_> = jobs
            .iter()
            .map(|job| {
                let pipeline = expansion.pipeline(tools, job.target).map(Arc::as_ref);
                let callable = tools.function(job.target);
                let asker = pausing.then(|| {
                    let pause = match &job.replay {
                        Some(replay) => {
                            CallPause::new(replay.answers.clone(), replay.round.clone())
                        }
                        None => CallPause::default(),
                    };
                    Arc::new(PausingAsker {
                        handlers: Arc::clone(&handlers),
                        pause,
                    })
                });
                let scope = CallScope {
                    cancellation: &self.cancellation,
                    turn_id: Some(Arc::clone(&self.turn_id)),
                    events: events.clone(),
                    asker: Some(match &asker {
                        Some(asker) => Arc::clone(asker) as Arc<dyn Asker>,
                        None => Arc::clone(&handlers),
                    }),
                };
                async move {
                    let started = Instant::now();
                    let run = call::run(
                        global,
                        pipeline,
                        callable,
                        job.call_id,
                        job.arguments,
                        &scope,
                        job.approval,
                    )
                    .instrument(job.span.clone());
                    let result = match &asker {
                        Some(asker) => tokio::select! {
                            result = run => Ok(result),
                            () = asker.pause.deferred() => Err(asker.pause.take_deferred()),
                        },
                        None => Ok(run.await),
                    };
                    (job.slot, job.target, started.elapsed(), result)
                }
            })
            .collect();
        // At most `max_parallel_calls` run at once; `buffered` yields them in call order.
        let finished: Vec<_> = futures::stream::iter(executions)
            .buffered(self.agent.limits.max_parallel_calls)
            .collect()
            .await;
        let mut first_error = None;
        for (slot, target, elapsed, result) in finished {
            records[slot].duration += elapsed;
            match result {
                Ok(Ok(result)) => records[slot].result = Some(result),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                // A question was deferred: the call waits for its answer.
                Err(deferred) => records[slot].deferred = deferred.map(|d| (d, target)),
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Routes the calls of one response and runs those that need no approval, into their
    /// records; returns the calls that wait for approval.
    async fn resolve_and_run(
        &mut self,
        info: &IterationInfo,
        calls: &[ToolCall],
        records: &mut [CallRecord],
        spans: &[tracing::Span],
    ) -> Result<Vec<Waiting>, RunError> {
        let global = &self.agent.middleware;
        run_hooks(
            "before_tool_execution",
            forward(global, &self.expansion.pipelines),
            Some(&self.cancellation),
            |m| m.before_tool_execution(info, calls),
        )
        .await?;

        // Resolution sees the expansion state of the request these calls answer, and what the
        // history already shows the model (schemas, loaded tools: not sent again).
        let seen = self.expansion.expanded.clone();
        // Only what the request carried counts: turns the context budget trimmed are gone
        // from the model's view.
        let sent = (*self.trimmed).min(self.history.len());
        let delivered = self.tools.delivered(&self.history[sent..]);
        let tools = self.tools;
        let mut runs: Vec<(usize, Target)> = Vec::new();
        // Instructions a run's result carries (every layout but `hide`).
        let mut carried: Vec<(usize, String)> = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let started = Instant::now();
            call::started(&self.emitter, &call.id, &call.name, &call.arguments);
            let record = &mut records[i];
            if record.result.is_some() {
                // Answered before resolution (limits, the layout's own tools).
                telemetry::record_tool(&spans[i], &call.name, None);
                record.duration = started.elapsed();
                continue;
            }
            let (resolved, opened) = call::route(
                &mut self.expansion,
                tools,
                &call.name,
                &seen,
                &delivered,
                &self.emitter,
            )?;
            match resolved {
                call::Resolved::Run(target) => {
                    let function = tools.function(target);
                    telemetry::record_tool(
                        &spans[i],
                        function.name(),
                        Some(function.harness_name()),
                    );
                    if let Some(section) =
                        self.expansion.take_instructions(tools, target, &delivered)
                    {
                        carried.push((i, section));
                    }
                    // An executed recovered call loads its container's members too.
                    if let Some(h) = opened.container {
                        record.references = tools.references(h, &delivered);
                    }
                    runs.push((i, target));
                }
                call::Resolved::Answered(answer) => {
                    telemetry::record_tool(&spans[i], &call.name, None);
                    let call::Answer {
                        result,
                        references,
                        error_type,
                    } = *answer;
                    record.container_answer = opened.container.filter(|_| error_type.is_none());
                    record.result = Some(result);
                    record.references = references;
                    record.error_type = error_type;
                }
            }
            telemetry::record_expanded(&spans[i], &opened.harnesses, opened.recovered);
            record.duration = started.elapsed();
        }

        // Calls that wait for a person's approval leave the batch; the others run now.
        let mut waiting: Vec<Waiting> = Vec::new();
        let mut now: Vec<(usize, Target)> = Vec::with_capacity(runs.len());
        for (i, target) in runs {
            let required = approval_required(
                global,
                self.expansion.pipeline(tools, target).map(Arc::as_ref),
                tools.function(target),
                &calls[i].id,
                &calls[i].arguments,
                Some(&self.turn_id),
            )
            .await?;
            if required {
                let section = carried
                    .iter()
                    .position(|&(c, _)| c == i)
                    .map(|at| carried.remove(at).1);
                waiting.push(Waiting {
                    index: i,
                    target,
                    references: std::mem::take(&mut records[i].references),
                    carried: section,
                });
            } else {
                now.push((i, target));
            }
        }
        let jobs: Vec<Job<'_>> = now
            .iter()
            .map(|&(i, target)| Job {
                slot: i,
                target,
                call_id: &calls[i].id,
                arguments: &calls[i].arguments,
                approval: None,
                replay: None,
                span: spans[i].clone(),
            })
            .collect();
        self.batch_hooks(info, &jobs).await?;
        let executed = self.execute(&jobs, records).await;
        for (i, section) in carried {
            if let Some(result) = records[i].result.as_mut() {
                result.text = with_section(std::mem::take(&mut result.text), Some(section));
            } else if records[i].deferred.is_some() {
                // The result comes when the call goes on.
                records[i].carried = Some(section);
            }
        }
        executed.map(|()| waiting)
    }
}

/// Checks a final answer against the schema, then against the Rust type of a typed run.
fn checked(
    schema: &OutputSchema,
    typed: Option<TypedCheck>,
    text: &str,
) -> Result<serde_json::Value, Mismatch> {
    let value = schema.check_value(text)?;
    if let Some(typed) = typed {
        typed(&value)?;
    }
    Ok(value)
}

/// Admits the calls of one response ([`call::admit`]): answers those that limits reject or
/// whose call-tool arguments name nothing (in their records), and returns the calls as they
/// stand after unwrapping, when one changed.
fn admit_calls(
    tools: &Toolset,
    limits: &crate::config::Limits,
    calls: &[ToolCall],
    records: &mut [CallRecord],
) -> Option<Vec<ToolCall>> {
    let mut unwrapped: Option<Vec<ToolCall>> = None;
    for (i, call) in calls.iter().enumerate() {
        match call::admit(|| tools, limits, &call.name, &call.arguments) {
            Unwrapped::Direct => {}
            Unwrapped::Inner { name, arguments } => {
                let calls = unwrapped.get_or_insert_with(|| calls.to_vec());
                calls[i].name = name;
                calls[i].arguments = arguments;
            }
            Unwrapped::Invalid(result) => records[i].result = Some(result),
        }
    }
    unwrapped
}
