//! Sub-agents: a tool that runs a child agent built from its own [`AgentConfig`].

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::json;

use crate::chat::{ChatClient, ToolDefinition};
use crate::config::{AgentConfig, SubAgentConfig};
use crate::error::BuildError;
use crate::function::FunctionFailure;

use super::builder::AgentBuilder;
use super::events::AgentEvent;
use super::pipeline::{CallScope, Callable};
use super::registration::split_reference;
use super::tools::{BuiltHarness, ToolSet};
use super::{Agent, AgentRunConfig};

/// How deep sub-agents may nest when nothing else is set.
pub const DEFAULT_MAX_DEPTH: usize = 3;

/// A tool that runs a child agent.
///
/// The parent sees one tool with a single required `input` string parameter; the result is the
/// child's final text, or an error result (`Error: sub-agent '{name}' failed: ...`) when the
/// child's run fails. The child is built from its own [`AgentConfig`] (instructions, harnesses,
/// collapsing settings) when the parent is built, and uses the parent's chat client unless its
/// config names a model. Each call runs in a fresh child session. The tool is always visible,
/// in registration order among the plain functions (SPEC 3.2, group 1).
///
/// [`with_parent_functions`](Self::with_parent_functions) hands functions of the parent's
/// harnesses to the child as plain tools; they run through a scoped pipeline of their harness
/// created for the child's run. Child events reach the parent's subscribers as
/// [`AgentEvent::SubAgent`], tagged with the sub-agent's name and depth.
///
/// ```
/// use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient, SubAgent};
///
/// let researcher = SubAgent::new(
///     "researcher",
///     "Researches a question and answers it.",
///     AgentConfig::from_json(r#"{"instructions": "Be thorough."}"#).unwrap(),
/// );
/// let agent = AgentBuilder::new()
///     .with_sub_agent(researcher)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()
///     .unwrap();
/// assert_eq!(agent.initial_tool_names(), ["researcher"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgent {
    /// Name, description, child config and parent functions: the same data as a config entry.
    entry: SubAgentConfig,
    max_depth: usize,
}

impl SubAgent {
    /// A sub-agent tool named `name`, described to the parent model by `description`, running
    /// a child agent built from `config`.
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        config: AgentConfig,
    ) -> Self {
        SubAgent::from_config(&SubAgentConfig::new(name, description, config))
    }

    /// The sub-agent of a config entry.
    #[must_use]
    pub fn from_config(config: &SubAgentConfig) -> Self {
        SubAgent {
            entry: config.clone(),
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// Hands these functions of the parent's harnesses (`Harness.function`) to the child.
    #[must_use]
    pub fn with_parent_functions<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.entry
            .parent_functions
            .extend(functions.into_iter().map(Into::into));
        self
    }

    /// How deep sub-agents may nest below this one's parent (default 3): building a chain of
    /// nested sub-agents deeper than this fails.
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The tool name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.entry.name
    }

    /// Builds the child agent at `depth` (1 for a sub-agent of a top-level agent).
    pub(crate) fn build(
        &self,
        parent: &ToolSet,
        parent_client: &Arc<dyn ChatClient>,
        depth: usize,
    ) -> Result<SubAgentTool, BuildError> {
        let context = |source: BuildError| BuildError::SubAgent {
            name: self.entry.name.clone(),
            source: Box::new(source),
        };
        if depth > self.max_depth {
            return Err(context(BuildError::SubAgentDepth {
                max_depth: self.max_depth,
            }));
        }
        let handed = self.parent_harnesses(parent).map_err(context)?;
        let mut builder = AgentBuilder::from_config((*self.entry.config).clone()).with_depth(depth);
        if self.entry.config.model.is_none() {
            builder = builder.with_shared_chat_client(Arc::clone(parent_client));
        }
        let agent = builder.build_with(handed).map_err(context)?;
        Ok(SubAgentTool {
            name: self.entry.name.clone(),
            depth,
            definition: Arc::new(ToolDefinition {
                name: self.entry.name.clone(),
                description: self.entry.description.clone(),
                parameters: Arc::new(json!({
                    "type": "object",
                    "properties": {
                        "input": {
                            "type": "string",
                            "description": "The task or question for the sub-agent."
                        }
                    },
                    "required": ["input"]
                })),
            }),
            agent,
        })
    }

    /// The parent's harnesses reduced to the handed functions, uncollapsed, in reference order.
    fn parent_harnesses(&self, parent: &ToolSet) -> Result<Vec<BuiltHarness>, BuildError> {
        let mut handed: Vec<BuiltHarness> = Vec::new();
        for reference in &self.entry.parent_functions {
            let (harness_name, function) = split_reference(reference)?;
            let h = parent.harness_index(harness_name).ok_or_else(|| {
                let mut known: Vec<&str> =
                    parent.harnesses.iter().map(BuiltHarness::name).collect();
                known.sort_unstable();
                BuildError::UnknownHarness {
                    harness: harness_name.to_owned(),
                    known: known.join(", "),
                }
            })?;
            let source = &parent.harnesses[h];
            let declared = || source.entry.function_names();
            let found = match source.functions.iter().find(|f| f.name() == function) {
                Some(found) => found,
                None if declared().any(|f| f == function) => {
                    return Err(BuildError::FunctionNotRegistered {
                        function: function.to_owned(),
                        harness: source.name().to_owned(),
                    });
                }
                None => {
                    return Err(BuildError::UnknownFunction {
                        function: function.to_owned(),
                        harness: source.name().to_owned(),
                        available: declared().collect::<Vec<_>>().join(", "),
                    });
                }
            };
            match handed.iter_mut().find(|b| b.name() == source.name()) {
                Some(existing) => {
                    if !existing.functions.iter().any(|f| f.name() == found.name()) {
                        existing.functions.push(found.clone());
                    }
                }
                None => handed.push(BuiltHarness {
                    functions: vec![found.clone()],
                    collapsed: false,
                    container: None,
                    ..source.clone()
                }),
            }
        }
        Ok(handed)
    }
}

/// A built sub-agent as a tool of its parent.
pub(crate) struct SubAgentTool {
    pub(crate) name: String,
    pub(crate) depth: usize,
    pub(crate) definition: Arc<ToolDefinition>,
    agent: Agent,
}

#[derive(serde::Deserialize)]
struct SubAgentInput {
    input: String,
}

impl Callable for SubAgentTool {
    fn tool_name(&self) -> &str {
        &self.name
    }

    fn owner(&self) -> &str {
        &self.name
    }

    fn has_scoped_pipeline(&self) -> bool {
        false
    }

    fn execute<'a>(
        &'a self,
        _call_id: &'a str,
        arguments: &'a str,
        scope: &'a CallScope,
    ) -> BoxFuture<'a, Result<String, FunctionFailure>> {
        Box::pin(async move {
            let value = crate::function::parse_arguments_text(arguments)
                .map_err(FunctionFailure::InvalidArguments)?;
            let SubAgentInput { input } = crate::__private::parse_arguments(value)
                .map_err(|e| FunctionFailure::InvalidArguments(e.0))?;
            let emitter = scope.emitter.clone();
            let (name, depth) = (self.name.clone(), self.depth);
            let config = AgentRunConfig::new()
                .with_cancellation(scope.cancellation.child_token())
                .on_event(move |event| {
                    emitter.emit(&AgentEvent::SubAgent {
                        name: name.clone(),
                        depth,
                        event: Box::new(event.clone()),
                    });
                });
            let mut session = self.agent.session();
            match session.run_with(input, config).await {
                Ok(output) => Ok(output.text),
                Err(e) => Err(FunctionFailure::Returned(format!(
                    "sub-agent '{}' failed: {e}",
                    self.name
                ))),
            }
        })
    }
}
