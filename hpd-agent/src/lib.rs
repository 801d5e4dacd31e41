//! # hpd-agent
//!
//! LLM agents whose tools are plain Rust methods.
#![forbid(unsafe_code)]

pub mod chat;
mod error;
pub mod function;
pub mod harness;
pub mod middleware;
pub mod openai;
pub mod registry;
pub mod scripted;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use async_trait::async_trait;
pub use chat::{
    ChatClient, ChatError, ChatMessage, ChatRequest, ChatResponse, TextSink, ToolCall,
    ToolDefinition, Usage,
};
pub use error::{BuildError, HydrateError, RunError};
pub use function::{Function, FunctionContext, FunctionFailure, FunctionSpec, ToolResult};
pub use harness::ToolHarness;
pub use hpd_agent_macros::{ai_function, collapse, tool_harness};
pub use middleware::{
    ConfigurableMiddleware, FunctionCall, HookResult, IterationInfo, Middleware, MiddlewareError,
    Next, TurnInfo, TurnOutcome,
};
pub use openai::OpenAiClient;
pub use registry::{HarnessEntry, HarnessInfo, Registry, RegistryError};
pub use scripted::{RecordedRequest, ScriptedChatClient};
pub use tokio_util::sync::CancellationToken;

/// What most code needs: the attribute macros and the types they use.
pub mod prelude {
    pub use crate::{
        CancellationToken, FunctionContext, ToolHarness, ai_function, async_trait, collapse,
        tool_harness,
    };
}

/// A config parse error (placeholder until the config module lands).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);
