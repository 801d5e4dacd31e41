//! The model loop of one turn.

use std::sync::Arc;
use std::time::Instant;

use futures::future::join_all;
use tracing::Instrument as _;

use crate::chat::{
    ChatMessage, ChatRequest, FinishReason, ModelOptions, ToolCall, ToolDefinition, Usage,
};
use crate::error::RunError;
use crate::function::ToolResult;
use crate::middleware::{FunctionCall, IterationInfo, TurnInfo, TurnOutcome};
use crate::registry::Registry;

use super::events::{AgentEvent, Emitter};
use super::pipeline::{
    CallScope, Callable, ScopedPipeline, backward, call_function, forward, run_hooks,
};
use super::registration::resolve;
use super::tool_choice;
use super::tools::{Resolution, ToolSet};
use super::{AgentInner, AgentRunConfig, RunOutput, Session};

/// The text of calls left unanswered when middleware ends the run.
const ABORTED: &str = "Error: run aborted by middleware";
/// The text of calls left unanswered when the run is cancelled.
const CANCELLED: &str = "Error: run cancelled";

/// Mutable state of one turn.
struct Turn<'a> {
    agent: &'a AgentInner,
    tools: &'a ToolSet,
    emitter: Emitter,
    cancellation: tokio_util::sync::CancellationToken,
    instructions: String,
    expanded: Vec<String>,
    pipelines: Vec<Arc<ScopedPipeline>>,
    history: &'a mut Vec<ChatMessage>,
    usage: Usage,
    /// The agent's model options with the run's merged over them.
    options: ModelOptions,
    /// Whether the model called a tool in this turn (forcing tool choices then stop).
    tool_called: bool,
    /// Why the model stopped its latest reply.
    finish_reason: FinishReason,
}

pub(super) async fn run_turn(
    agent: &AgentInner,
    session: &mut Session,
    message: String,
    config: AgentRunConfig,
) -> Result<RunOutput, RunError> {
    let run_tools;
    let tools: &ToolSet = if config.registrations.is_empty() {
        &agent.tools
    } else {
        let registry = Registry::global();
        let resolved = config
            .registrations
            .merged()
            .map(|r| resolve(registry, &r))
            .collect::<Result<Vec<_>, _>>()?;
        run_tools = ToolSet::extend(&agent.tools, resolved, &agent.collapsing)?;
        &run_tools
    };
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
    let persist = agent.collapsing.persist_system_prompt_injections;
    let options = match &config.model_options {
        Some(run) => agent.model_options.merged_with(run),
        None => agent.model_options.clone(),
    };

    let turn_info = TurnInfo {
        agent_name: agent.name.clone(),
        user_message: message.clone(),
    };
    session.state.history.push(ChatMessage::user(message));

    let mut turn = Turn {
        agent,
        tools,
        emitter: Emitter::new(handlers),
        cancellation: config.cancellation.unwrap_or_default(),
        instructions,
        expanded: std::mem::take(&mut session.state.expanded),
        pipelines: std::mem::take(&mut session.pipelines),
        history: &mut session.state.history,
        usage: Usage::default(),
        options,
        tool_called: false,
        finish_reason: FinishReason::default(),
    };

    let outcome = match turn.start_pipelines() {
        Ok(()) => turn.iterate(&turn_info, max_iterations).await,
        Err(e) => Err(e),
    };

    let usage = turn.usage;
    let finish_reason = turn.finish_reason.clone();
    let after = {
        let outcome_view = match &outcome {
            Ok((text, _)) => TurnOutcome::Finished {
                text: text.as_str(),
                usage,
            },
            Err(e) => TurnOutcome::Failed(e),
        };
        run_hooks(
            "after_message_turn",
            backward(&agent.middleware, &turn.pipelines),
            None,
            |m| m.after_message_turn(&turn_info, outcome_view),
        )
        .await
    };

    // Turn end: containers collapse and scoped pipelines drop, unless they persist.
    let Turn {
        expanded,
        pipelines,
        emitter,
        ..
    } = turn;
    if persist {
        // Only the agent's own expansions persist: harnesses added for this run are gone next
        // run. Pipelines of plain harnesses are created afresh each turn.
        session.state.expanded = expanded
            .into_iter()
            .filter(|e| agent.tools.harness_index(e).is_some())
            .collect();
        session.pipelines = pipelines
            .into_iter()
            .filter(|p| session.state.expanded.iter().any(|e| e == p.harness))
            .collect();
    }
    emitter.emit(&AgentEvent::TurnFinished {
        usage,
        failed: outcome.is_err() || after.is_err(),
    });

    let (text, iterations) = outcome?;
    after?;
    Ok(RunOutput {
        text,
        usage,
        iterations,
        finish_reason,
    })
}

impl Turn<'_> {
    /// Creates the pipelines that exist from the start of the turn: those of harnesses whose
    /// functions are visible without expansion, and those of persisted expansions that lost
    /// theirs (a resumed session).
    fn start_pipelines(&mut self) -> Result<(), RunError> {
        // Persisted expansions first, in expansion order (their pipelines were created in that
        // order), then harnesses whose functions are visible without expansion.
        let expanded: Vec<usize> = self
            .expanded
            .iter()
            .filter_map(|name| self.tools.harness_index(name))
            .filter(|&h| self.tools.harnesses[h].collapsed)
            .collect();
        for h in expanded {
            self.ensure_pipeline(h)?;
        }
        for h in 0..self.tools.harnesses.len() {
            if !self.tools.harnesses[h].collapsed {
                self.ensure_pipeline(h)?;
            }
        }
        Ok(())
    }

    fn ensure_pipeline(&mut self, h: usize) -> Result<(), RunError> {
        let harness = &self.tools.harnesses[h];
        if self.pipelines.iter().any(|p| p.harness == harness.name()) {
            return Ok(());
        }
        if let Some(pipeline) = ScopedPipeline::create(harness)? {
            self.pipelines.push(pipeline);
        }
        Ok(())
    }

    fn pipeline(&self, harness: &str) -> Option<&ScopedPipeline> {
        self.pipelines
            .iter()
            .find(|p| p.harness == harness)
            .map(|p| &**p)
    }

    /// The system instructions for the next request (SPEC 3.8).
    fn system_instructions(&self) -> String {
        let sections: Vec<String> = self
            .expanded
            .iter()
            .filter_map(|name| {
                let h = self.tools.harness_index(name)?;
                let harness = &self.tools.harnesses[h];
                if !harness.collapsed {
                    return None;
                }
                harness
                    .system_prompt()
                    .map(|prompt| format!("### {}\n{prompt}", harness.name()))
            })
            .collect();
        if sections.is_empty() {
            return self.instructions.clone();
        }
        let mut text = String::new();
        if !self.instructions.is_empty() {
            text.push_str(&self.instructions);
            text.push_str("\n\n");
        }
        text.push_str("## Active container instructions\n\n");
        text.push_str(&sections.join("\n\n"));
        text
    }

    async fn iterate(
        &mut self,
        turn_info: &TurnInfo,
        max_iterations: usize,
    ) -> Result<(String, usize), RunError> {
        let global = &self.agent.middleware;
        run_hooks(
            "before_message_turn",
            forward(global, &self.pipelines),
            Some(&self.cancellation),
            |m| m.before_message_turn(turn_info),
        )
        .await?;

        for iteration in 1..=max_iterations {
            let changed_options = self.request_options()?;
            let visible: Vec<Arc<ToolDefinition>> = self.tools.visible(&self.expanded);
            let info = IterationInfo {
                iteration,
                visible_tools: visible.iter().map(|t| t.name.clone()).collect(),
            };
            let instructions = self.system_instructions();
            self.emitter.emit(&AgentEvent::IterationStarted {
                iteration,
                visible_tools: info.visible_tools.clone(),
            });
            run_hooks(
                "before_iteration",
                forward(global, &self.pipelines),
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
            let options = changed_options.as_ref().unwrap_or(&self.options);
            let request =
                ChatRequest::new(&instructions, self.history, &visible).with_options(options);
            let response = tokio::select! {
                biased;
                () = self.cancellation.cancelled() => return Err(RunError::Cancelled),
                response = self
                    .agent
                    .client
                    .complete(request, &sink)
                    .instrument(tracing::debug_span!(target: "hpd_agent", "model_request", iteration)) => response?,
            };
            self.usage += response.usage;
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
            if !answered {
                self.handle_calls(&info, &response.tool_calls).await?;
            }
            run_hooks(
                "after_iteration",
                backward(global, &self.pipelines),
                Some(&self.cancellation),
                |m| m.after_iteration(&info),
            )
            .await?;
            if answered {
                return Ok((response.text.unwrap_or_default(), iteration));
            }
        }
        Err(RunError::MaxIterations(max_iterations))
    }

    /// The options of the next request: the turn's, with the tool choice resolved against the
    /// tools (which may expand a container first, as recovery would).
    /// `None` when they are the turn's options unchanged.
    fn request_options(&mut self) -> Result<Option<ModelOptions>, RunError> {
        let resolved = tool_choice::resolve(
            self.tools,
            &self.expanded,
            self.options.tool_choice.as_ref(),
            self.tool_called,
        )?;
        if let Some(harness) = resolved.expand {
            self.expand(harness, true)?;
        }
        if resolved.choice == self.options.tool_choice {
            return Ok(None);
        }
        let mut options = self.options.clone();
        options.tool_choice = resolved.choice;
        Ok(Some(options))
    }

    /// Resolves and runs the calls of one response and appends a result for every call, in
    /// call order, whatever happens.
    async fn handle_calls(
        &mut self,
        info: &IterationInfo,
        calls: &[ToolCall],
    ) -> Result<(), RunError> {
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        let mut durations = vec![std::time::Duration::ZERO; calls.len()];
        let outcome = self
            .resolve_and_run(info, calls, &mut results, &mut durations)
            .await;
        let filler = match &outcome {
            Err(RunError::Cancelled) => CANCELLED,
            _ => ABORTED,
        };
        for ((call, result), duration) in calls.iter().zip(results).zip(durations) {
            let result = result.unwrap_or_else(|| ToolResult::error(filler));
            self.emitter.emit(&AgentEvent::ToolCallFinished {
                call_id: call.id.clone(),
                name: call.name.clone(),
                result: result.text.clone(),
                duration,
                is_error: result.is_error,
            });
            self.history.push(ChatMessage::Tool {
                call_id: call.id.clone(),
                content: result.text,
                is_error: result.is_error,
            });
        }
        outcome
    }

    async fn resolve_and_run(
        &mut self,
        info: &IterationInfo,
        calls: &[ToolCall],
        results: &mut [Option<ToolResult>],
        durations: &mut [std::time::Duration],
    ) -> Result<(), RunError> {
        let global = &self.agent.middleware;
        run_hooks(
            "before_tool_execution",
            forward(global, &self.pipelines),
            Some(&self.cancellation),
            |m| m.before_tool_execution(info, calls),
        )
        .await?;

        // Resolution sees the expansion state of the request these calls answer.
        let seen = self.expanded.clone();
        let tools = self.tools;
        let mut runs: Vec<(usize, &dyn Callable)> = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let started = Instant::now();
            self.emitter.emit(&AgentEvent::ToolCallStarted {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            });
            match self.tools.resolve(&call.name, &seen) {
                Resolution::Run { harness, function } => {
                    runs.push((i, tools.function(harness, function)));
                }
                Resolution::SubAgent { index } => runs.push((i, &*tools.sub_agents[index])),
                Resolution::Container { harness } => {
                    self.expand(harness, false)?;
                    let text = self.tools.harnesses[harness].expansion_text();
                    results[i] = Some(ToolResult::ok(text));
                }
                Resolution::Recover { harness, function } => {
                    self.expand(harness, true)?;
                    if self.agent.collapsing.execute_recovered_calls {
                        runs.push((i, tools.function(harness, function)));
                    } else {
                        let name = tools.function(harness, function).name();
                        let text = tools.harnesses[harness].recovery_text(name);
                        results[i] = Some(ToolResult::ok(text));
                    }
                }
                Resolution::Unknown => {
                    let text = if info.visible_tools.is_empty() {
                        format!(
                            "Function '{}' not found. No functions are available.",
                            call.name
                        )
                    } else {
                        format!(
                            "Function '{}' not found. Available functions: {}",
                            call.name,
                            info.visible_tools.join(", ")
                        )
                    };
                    results[i] = Some(ToolResult::error(text));
                }
            }
            durations[i] = started.elapsed();
        }

        if runs.len() >= 2 {
            let batch: Vec<FunctionCall> = runs
                .iter()
                .map(|&(i, callable)| {
                    FunctionCall::new(
                        calls[i].id.clone(),
                        callable.tool_name(),
                        callable.owner(),
                        calls[i].arguments.clone(),
                    )
                })
                .collect();
            let owning: Vec<Arc<ScopedPipeline>> = self
                .pipelines
                .iter()
                .filter(|p| {
                    runs.iter()
                        .any(|(_, c)| c.has_scoped_pipeline() && c.owner() == p.harness)
                })
                .cloned()
                .collect();
            run_hooks(
                "before_parallel_batch",
                forward(global, &owning),
                Some(&self.cancellation),
                |m| m.before_parallel_batch(info, &batch),
            )
            .await?;
        }

        let scope = CallScope {
            cancellation: self.cancellation.clone(),
            emitter: self.emitter.clone(),
        };
        let executions = runs.iter().map(|&(i, callable)| {
            let pipeline = callable
                .has_scoped_pipeline()
                .then(|| self.pipeline(callable.owner()))
                .flatten();
            let call = &calls[i];
            let scope = &scope;
            async move {
                let started = Instant::now();
                let result = tokio::select! {
                    biased;
                    () = scope.cancellation.cancelled() => Err(RunError::Cancelled),
                    result = call_function(global, pipeline, callable, &call.id, &call.arguments, scope)
                        .instrument(tracing::debug_span!(
                            target: "hpd_agent",
                            "tool_call",
                            name = callable.tool_name(),
                            call_id = %call.id,
                        )) => result,
                };
                (i, started.elapsed(), result)
            }
        });
        let mut first_error = None;
        for (i, elapsed, result) in join_all(executions).await {
            durations[i] += elapsed;
            match result {
                Ok(result) => results[i] = Some(result),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Expands the container of harness `h` if it is not expanded yet.
    fn expand(&mut self, h: usize, recovery: bool) -> Result<(), RunError> {
        let harness = &self.tools.harnesses[h];
        if self.expanded.iter().any(|e| e == harness.name()) {
            return Ok(());
        }
        // The pipeline first: if its middleware cannot be created, the container stays collapsed.
        self.ensure_pipeline(h)?;
        self.expanded.push(harness.name().to_owned());
        self.emitter.emit(&AgentEvent::ContainerExpanded {
            harness: harness.name().to_owned(),
            recovery,
        });
        Ok(())
    }
}
