//! How [`McpHarness`](super::McpHarness) answers its server's requests: sampling through the
//! application's [`SamplingPolicy`] and the calling agent's model, elicitation through the
//! harness's handler or the calling agent's, roots from code or config.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use crate::tool::{
    Answer, AskError, Asker, Elicitation, ElicitationAnswer, ElicitationHandler, Input, Root,
    SamplingReply, SamplingRequest,
};

/// Decides about the sampling requests of an MCP server before the agent's model answers
/// them: let a request through, rewrite it (a smaller token limit, another system prompt, a
/// redacted message) or refuse it. Set with
/// [`McpHarness::with_sampling_policy`](super::McpHarness::with_sampling_policy); without one
/// every request goes to the model as the server sent it.
///
/// ```
/// use hpd_agent::async_trait;
/// use hpd_agent::mcp::SamplingPolicy;
/// use hpd_agent::tool::{AskError, SamplingRequest};
///
/// /// At most 200 tokens, and never a system prompt of the server's.
/// struct Frugal;
///
/// #[async_trait]
/// impl SamplingPolicy for Frugal {
///     async fn review(&self, server: &str, mut request: SamplingRequest) -> Result<SamplingRequest, AskError> {
///         if server == "Untrusted" {
///             return Err(AskError::Refused("this server may not use the model".into()));
///         }
///         request.max_tokens = request.max_tokens.min(200);
///         request.system_prompt = None;
///         Ok(request)
///     }
/// }
/// # let _ = Frugal;
/// ```
#[async_trait]
pub trait SamplingPolicy: Send + Sync {
    /// The request to send to the model (the server's, or a rewritten one).
    ///
    /// # Errors
    ///
    /// A refusal ([`AskError::Refused`]), which the server gets as an error.
    async fn review(
        &self,
        server: &str,
        request: SamplingRequest,
    ) -> Result<SamplingRequest, AskError>;
}

/// What a harness answers its server with, as its builder set it.
#[derive(Clone, Default)]
pub(crate) struct AnswerSettings {
    pub(crate) policy: Option<Arc<dyn SamplingPolicy>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) roots: Option<Arc<[Root]>>,
}

impl std::fmt::Debug for AnswerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerSettings")
            .field("policy", &self.policy.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots)
            .finish()
    }
}

/// What a harness answers its server with, and the agents' handlers of the calls in flight.
#[derive(Default)]
pub(crate) struct Answering {
    pub(crate) settings: AnswerSettings,
    /// The askers (the calling agents' handlers) of the calls in flight, oldest first.
    callers: Mutex<Vec<(u64, Arc<dyn Asker>)>>,
    next: AtomicU64,
}

/// Keeps a call's asker registered while the call runs.
pub(crate) struct Caller<'a> {
    answering: &'a Answering,
    id: u64,
}

impl Drop for Caller<'_> {
    fn drop(&mut self) {
        self.answering.lock().retain(|(id, _)| *id != self.id);
    }
}

impl Answering {
    /// Answering as `settings` say.
    pub(crate) fn new(settings: AnswerSettings) -> Self {
        Answering {
            settings,
            ..Answering::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Arc<dyn Asker>)>> {
        self.callers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers the asker of a call in flight until the returned guard is dropped.
    pub(crate) fn enter(&self, asker: Option<Arc<dyn Asker>>) -> Option<Caller<'_>> {
        let asker = asker?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, asker));
        Some(Caller {
            answering: self,
            id,
        })
    }

    /// The asker of the most recent call in flight. A server's request names no call, so
    /// with calls of several agents in flight at once the newest one's handlers answer.
    fn caller(&self) -> Option<Arc<dyn Asker>> {
        self.lock().last().map(|(_, asker)| Arc::clone(asker))
    }

    /// The asker of the call: `asker` when given (the call's own, in an `input_required`
    /// round), else the most recent call's (a server's request names no call).
    fn asker_of(&self, asker: Option<&Arc<dyn Asker>>) -> Option<Arc<dyn Asker>> {
        asker.cloned().or_else(|| self.caller())
    }

    /// Answers a server's sampling request: the policy, then the calling agent's sampling
    /// handler (its model unless the application set another).
    pub(crate) async fn sample(
        &self,
        server: &str,
        request: SamplingRequest,
        asker: Option<&Arc<dyn Asker>>,
    ) -> Result<SamplingReply, AskError> {
        let request = match &self.settings.policy {
            Some(policy) => policy.review(server, request).await?,
            None => request,
        };
        let Some(caller) = self.asker_of(asker) else {
            return Err(AskError::NoHandler { what: "sampling" });
        };
        match caller.ask_now(Input::Sampling(request)).await? {
            Answer::Sampling(reply) => Ok(reply),
            _ => Err(AskError::InvalidAnswer("no completion".to_owned())),
        }
    }

    /// Answers a server's elicitation: the harness's handler, else the calling agent's. A
    /// deferral is [`AskError::Deferred`] here (see [`answer_input`](Self::answer_input)).
    pub(crate) async fn elicit(
        &self,
        request: Elicitation,
        asker: Option<&Arc<dyn Asker>>,
    ) -> Result<ElicitationAnswer, AskError> {
        if let Some(handler) = &self.settings.elicitation {
            return handler.elicit(&request).await;
        }
        let Some(caller) = self.asker_of(asker) else {
            return Err(AskError::NoHandler {
                what: "elicitation",
            });
        };
        match caller.ask_now(Input::Elicitation(request)).await? {
            Answer::Elicitation(answer) => Ok(answer),
            _ => Err(AskError::InvalidAnswer("no elicitation result".to_owned())),
        }
    }

    /// Answers one input of a 2026-07-28 `input_required` round of a call whose asker is
    /// `asker`. A call that goes on after a deferred question gets the answers it got before
    /// (by key); a question the handler defers pauses the call (in an agent's top-level
    /// run), keeping `round` (the saved round) with it; where the call cannot pause the
    /// deferral is [`AskError::Deferred`].
    pub(crate) async fn answer_input(
        &self,
        server: &str,
        key: &str,
        input: Input,
        asker: Option<&Arc<dyn Asker>>,
        round: &serde_json::Value,
    ) -> Result<Answer, AskError> {
        let pause = asker.and_then(|asker| asker.pause());
        if let Some(answer) = pause.and_then(|pause| pause.replayed(key)) {
            return Ok(answer);
        }
        let question = match &input {
            Input::Elicitation(request) => Some(request.clone()),
            _ => None,
        };
        let answer = match input {
            Input::Sampling(request) => self
                .sample(server, request, asker)
                .await
                .map(Answer::Sampling),
            Input::Elicitation(request) => {
                self.elicit(request, asker).await.map(Answer::Elicitation)
            }
            Input::Roots(_) => self.roots().map(Answer::Roots),
        };
        match (answer, pause, question) {
            (Ok(answer), pause, _) => {
                if let Some(pause) = pause {
                    pause.record(key, &answer);
                }
                Ok(answer)
            }
            (Err(AskError::Deferred), Some(pause), Some(question)) => {
                pause.defer(question, Some(round.clone())).await
            }
            (Err(error), _, _) => Err(error),
        }
    }

    /// Answers a server's `roots/list`: the harness's roots.
    pub(crate) fn roots(&self) -> Result<Vec<Root>, AskError> {
        self.settings
            .roots
            .as_ref()
            .map(|roots| roots.to_vec())
            .ok_or(AskError::NoHandler { what: "roots" })
    }
}
