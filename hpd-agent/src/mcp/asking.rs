//! The asks of served functions (sampling, elicitation, roots) as MCP: requests to the client
//! on the session revisions ([`SessionAsker`]), `input_required` rounds on 2026-07-28
//! ([`RoundAsker`]), and the conversions between the project's types and `rmcp`'s, which the
//! client side ([`super::answering`]) shares.

// Sampling and roots are deprecated in rmcp (SEP-2577 moves them out of the core from
// 2026-07-28 on), but every revision this crate speaks has them.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputResponses, ListRootsRequest, ListRootsResult,
    RequestStateCodec, Role, SamplingMessage, SealOptions,
};
use rmcp::service::Peer;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use crate::chat::{ChatMessage, ChatResponse};
use crate::tool::{
    Answer, AskError, Asker, ElicitAction, Elicitation, ElicitationAnswer, ElicitationKind, Input,
    Root, SamplingReply, SamplingRequest,
};

/// How long a sealed `requestState` may be sent back.
pub(crate) const REQUEST_STATE_TTL: std::time::Duration = std::time::Duration::from_secs(600);

/// The capability `input` needs, when `capabilities` lacks it.
pub(crate) fn missing_capability(
    capabilities: Option<&ClientCapabilities>,
    input: &Input,
) -> Option<&'static str> {
    let declared = match input {
        Input::Sampling(_) => capabilities.is_some_and(|c| c.sampling.is_some()),
        Input::Roots(_) => capabilities.is_some_and(|c| c.roots.is_some()),
        Input::Elicitation(request) => {
            let Some(elicitation) = capabilities.and_then(|c| c.elicitation.as_ref()) else {
                return Some(match request.kind {
                    ElicitationKind::Url { .. } => "elicitation (url)",
                    _ => "elicitation (form)",
                });
            };
            // A capability that names no mode means form, as the protocol says.
            let form = elicitation.form.is_some() || elicitation.url.is_none();
            match request.kind {
                ElicitationKind::Url { .. } if elicitation.url.is_none() => {
                    return Some("elicitation (url)");
                }
                ElicitationKind::Form { .. } if !form => return Some("elicitation (form)"),
                _ => true,
            }
        }
    };
    (!declared).then_some(input.what())
}

/// Adds to `required` the capability a client needs to answer `input`.
pub(crate) fn require_capability(required: &mut ClientCapabilities, input: &Input) {
    match input {
        Input::Sampling(_) => {
            required.sampling.get_or_insert_with(Default::default);
        }
        Input::Roots(_) => {
            required.roots.get_or_insert_with(Default::default);
        }
        Input::Elicitation(request) => {
            let elicitation = required.elicitation.get_or_insert_with(Default::default);
            match request.kind {
                ElicitationKind::Url { .. } => {
                    elicitation.url.get_or_insert_with(Default::default);
                }
                _ => {
                    elicitation.form.get_or_insert_with(Default::default);
                }
            }
        }
    }
}

// ---- the project's types as rmcp's, and back --------------------------------------------

fn sampling_params(request: &SamplingRequest) -> Result<CreateMessageRequestParams, AskError> {
    let mut messages = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User { content } => SamplingMessage::user_text(content.clone()),
            ChatMessage::Assistant { content, .. } => {
                SamplingMessage::assistant_text(content.clone().unwrap_or_default())
            }
            _ => {
                return Err(AskError::Failed(
                    "sampling takes user and assistant messages only".to_owned(),
                ));
            }
        });
    }
    let mut params = CreateMessageRequestParams::new(messages, request.max_tokens);
    if let Some(prompt) = &request.system_prompt {
        params = params.with_system_prompt(prompt.clone());
    }
    #[allow(clippy::cast_possible_truncation)]
    {
        params.temperature = request.temperature.map(|t| t as f32);
    }
    Ok(params)
}

/// A `sampling/createMessage` request as the project's [`SamplingRequest`]: text messages
/// only (the client side).
pub(crate) fn sampling_request(
    params: &CreateMessageRequestParams,
) -> Result<SamplingRequest, String> {
    let mut messages = Vec::with_capacity(params.messages.len());
    for message in &params.messages {
        let text: Vec<&str> = message
            .content
            .iter()
            .map(|block| {
                block
                    .as_text()
                    .map(|text| text.text.as_str())
                    .ok_or("only text content can be sampled here")
            })
            .collect::<Result<_, _>>()?;
        let text = text.join("\n");
        messages.push(match message.role {
            Role::User => ChatMessage::user(text),
            Role::Assistant => ChatMessage::assistant(&ChatResponse::text(text)),
        });
    }
    let mut request = SamplingRequest::from_messages(messages, params.max_tokens);
    request.system_prompt.clone_from(&params.system_prompt);
    request.temperature = params.temperature.map(f64::from);
    Ok(request)
}

/// The project's [`SamplingReply`] as a `sampling/createMessage` result.
pub(crate) fn sampling_result(reply: SamplingReply) -> CreateMessageResult {
    let mut result =
        CreateMessageResult::new(SamplingMessage::assistant_text(reply.text), reply.model);
    result.stop_reason = reply.stop_reason;
    result
}

fn sampling_reply(result: CreateMessageResult) -> Result<SamplingReply, AskError> {
    let text: Vec<&str> = result
        .message
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    if text.is_empty() {
        return Err(AskError::InvalidAnswer(
            "the client's completion has no text".to_owned(),
        ));
    }
    Ok(SamplingReply {
        text: text.join("\n"),
        model: result.model,
        stop_reason: result.stop_reason,
    })
}

fn elicit_params(request: &Elicitation) -> Result<ElicitRequestParams, AskError> {
    Ok(match &request.kind {
        ElicitationKind::Form { schema } => ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: request.message.clone(),
            requested_schema: serde_json::from_value::<ElicitationSchema>(schema.clone())
                .map_err(|e| {
                    AskError::Failed(format!(
                        "the form's schema is not one MCP elicitation allows (an object of primitive properties): {e}"
                    ))
                })?,
        },
        ElicitationKind::Url {
            url,
            elicitation_id,
        } => ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: request.message.clone(),
            url: url.clone(),
            elicitation_id: elicitation_id.clone(),
        },
    })
}

/// An `elicitation/create` request as the project's [`Elicitation`] (the client side).
pub(crate) fn elicitation(params: &ElicitRequestParams) -> Result<Elicitation, String> {
    match params {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => Ok(Elicitation::form(
            message.clone(),
            serde_json::to_value(requested_schema).map_err(|e| e.to_string())?,
        )),
        ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } => Ok(Elicitation::url(
            message.clone(),
            url.clone(),
            elicitation_id.clone(),
        )),
        _ => Err("an elicitation mode this client does not know".to_owned()),
    }
}

/// The project's [`ElicitationAnswer`] as an `elicitation/create` result.
pub(crate) fn elicit_result(answer: ElicitationAnswer) -> ElicitResult {
    let action = match answer.action {
        ElicitAction::Accept => ElicitationAction::Accept,
        ElicitAction::Decline => ElicitationAction::Decline,
        ElicitAction::Cancel => ElicitationAction::Cancel,
    };
    let result = ElicitResult::new(action);
    match answer.content {
        Some(content) if answer.action == ElicitAction::Accept => {
            result.with_content(Value::Object(content))
        }
        _ => result,
    }
}

fn elicitation_answer(result: ElicitResult) -> Result<ElicitationAnswer, AskError> {
    let action = match result.action {
        ElicitationAction::Accept => ElicitAction::Accept,
        ElicitationAction::Decline => ElicitAction::Decline,
        // Cancel, and actions of later revisions: the user did not answer.
        _ => ElicitAction::Cancel,
    };
    let content = match result.content {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map),
        Some(other) => {
            return Err(AskError::InvalidAnswer(format!(
                "the elicitation content is not an object: {other}"
            )));
        }
    };
    Ok(ElicitationAnswer { action, content })
}

/// The project's roots as an MCP `roots/list` result.
pub(crate) fn roots_result(roots: &[Root]) -> ListRootsResult {
    ListRootsResult::new(
        roots
            .iter()
            .map(|root| {
                let mut mcp = rmcp::model::Root::new(root.uri.clone());
                mcp.name.clone_from(&root.name);
                mcp
            })
            .collect(),
    )
}

fn roots(result: ListRootsResult) -> Vec<Root> {
    result
        .roots
        .into_iter()
        .map(|root| Root {
            uri: root.uri,
            name: root.name,
        })
        .collect()
}

// ---- the session revisions: requests to the client --------------------------------------

/// Asks the client of an MCP session with requests (2025-06-18, 2025-11-25).
pub(crate) struct SessionAsker {
    pub(crate) peer: Peer<RoleServer>,
}

#[async_trait]
impl Asker for SessionAsker {
    // Sampling and roots are deprecated in rmcp (SEP-2577) for 2026-07-28 on; the session
    // revisions have them.
    #[allow(deprecated)]
    async fn ask(&self, input: Input) -> Result<Answer, AskError> {
        let capabilities = self.peer.peer_info().map(|info| info.capabilities.clone());
        if let Some(what) = missing_capability(capabilities.as_ref(), &input) {
            return Err(AskError::NotDeclared { what });
        }
        let failed = |e: rmcp::ServiceError| AskError::Failed(format!("the MCP client: {e}"));
        match input {
            Input::Sampling(request) => {
                let result = self
                    .peer
                    .create_message(sampling_params(&request)?)
                    .await
                    .map_err(failed)?;
                sampling_reply(result).map(Answer::Sampling)
            }
            Input::Elicitation(request) => {
                let result = self
                    .peer
                    .create_elicitation(elicit_params(&request)?)
                    .await
                    .map_err(failed)?;
                elicitation_answer(result).map(Answer::Elicitation)
            }
            Input::Roots(_) => {
                let result = self.peer.list_roots().await.map_err(failed)?;
                Ok(Answer::Roots(roots(result)))
            }
        }
    }
}

// ---- 2026-07-28: input_required rounds --------------------------------------------------

/// Asks the client of a 2026-07-28 request: answers come from the request's `inputResponses`
/// and from its sealed `requestState` (the answers of earlier rounds); an ask without an
/// answer is recorded, and the call is then abandoned for an `input_required` result that
/// asks for everything recorded.
pub(crate) struct RoundAsker {
    capabilities: Option<ClientCapabilities>,
    /// Earlier rounds' answers (from the state) and this request's, by key.
    answers: BTreeMap<String, Value>,
    /// What this round could not answer, and an answer that was not what was asked.
    round: Mutex<Round>,
    /// Woken when the round has something to report.
    wake: tokio::sync::Notify,
}

#[derive(Default)]
struct Round {
    asked: InputRequests,
    /// The keys whose answers the call used (kept in the next state).
    used: BTreeMap<String, Value>,
    invalid: Option<ErrorData>,
    /// The capabilities of the asks the client did not declare (answered with
    /// [`AskError::NotDeclared`]), if any.
    undeclared: Option<ClientCapabilities>,
}

/// What a round ended with, when the call did not finish.
pub(crate) enum RoundEnd {
    /// Ask the client for these, with this state.
    InputRequired(rmcp::model::InputRequiredResult),
    /// The client's answer was not what was asked.
    Invalid(ErrorData),
}

/// The sealed state of a call's rounds: the answers so far.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    answers: BTreeMap<String, Value>,
}

/// What a state is bound to: the request's method (`tools/call`, `prompts/get`), the tool or
/// prompt it names, and its arguments.
fn binding(method: &str, name: &str, arguments: &str) -> Vec<u8> {
    format!(
        "{method}\u{0}{name}\u{0}{:016x}",
        crate::tool::arguments_digest(arguments)
    )
    .into_bytes()
}

impl RoundAsker {
    /// The asker of one request of `method` for the tool or prompt `name`: `state` is opened
    /// with `codec` (bound to the method, the name and the arguments).
    ///
    /// # Errors
    ///
    /// A `requestState` that was not sealed here, was changed, belongs to another call or is
    /// too old: invalid params.
    pub(crate) fn open(
        codec: &RequestStateCodec,
        method: &str,
        name: &str,
        arguments: &str,
        state: Option<&str>,
        responses: Option<InputResponses>,
        capabilities: Option<ClientCapabilities>,
    ) -> Result<RoundAsker, ErrorData> {
        let mut answers =
            match state {
                None => BTreeMap::new(),
                Some(state) => codec
                    .open_json_with::<Sealed>(state, &binding(method, name, arguments))
                    .map_err(|e| {
                        ErrorData::invalid_params(
                            format!(
                                "the requestState is not one this server sealed for this call: {e}"
                            ),
                            None,
                        )
                    })?
                    .answers,
            };
        // This round's answers win over earlier ones of the same key.
        answers.extend(responses.unwrap_or_default());
        Ok(RoundAsker {
            capabilities,
            answers,
            round: Mutex::new(Round::default()),
            wake: tokio::sync::Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Round> {
        self.round.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Resolves when the round has something to report (an unanswered ask, an invalid
    /// answer).
    pub(crate) async fn wants_to_end(&self) {
        self.wake.notified().await;
    }

    /// What the round ends with, once [`wants_to_end`](Self::wants_to_end) resolved: the
    /// `input_required` result for everything asked, with the answers used so far sealed.
    pub(crate) fn end(
        &self,
        codec: &RequestStateCodec,
        method: &str,
        name: &str,
        arguments: &str,
    ) -> Option<RoundEnd> {
        let mut round = self.lock();
        if let Some(error) = round.invalid.take() {
            return Some(RoundEnd::Invalid(error));
        }
        if round.asked.is_empty() {
            return None;
        }
        let state = codec
            .seal_json_with(
                &Sealed {
                    answers: round.used.clone(),
                },
                &SealOptions::new()
                    .associated_data(&binding(method, name, arguments))
                    .ttl(REQUEST_STATE_TTL),
            )
            .ok();
        Some(RoundEnd::InputRequired(
            rmcp::model::InputRequiredResult::new(Some(std::mem::take(&mut round.asked)), state),
        ))
    }

    /// `MissingRequiredClientCapabilityError` (`-32021`, which rmcp answers with HTTP 400)
    /// for a call that failed after asking what the client did not declare: the function
    /// needed it. A call that went on without the answer keeps its result.
    pub(crate) fn missing_capabilities(
        &self,
        result: &crate::tool::ToolResult,
    ) -> Option<ErrorData> {
        if !result.is_error {
            return None;
        }
        self.undeclared_error(&result.text)
    }

    /// [`missing_capabilities`](Self::missing_capabilities) for a request that failed with
    /// `failure` (a prompt's error): `None` when it asked nothing undeclared.
    pub(crate) fn undeclared_error(&self, failure: &str) -> Option<ErrorData> {
        let required = self.lock().undeclared.clone()?;
        let mut error = ErrorData::missing_required_client_capability(required);
        // The function's own words say what it needed the answer for.
        error.message = format!("{}: {failure}", error.message).into();
        Some(error)
    }

    /// Runs `work` (a call, a prompt) in this round: its output when it finishes, or how the
    /// round ends when the work asked what this round cannot answer (the work is then
    /// dropped, which cancels it) or got an answer that is not what it asked.
    pub(crate) async fn drive<F: std::future::Future>(
        &self,
        codec: &RequestStateCodec,
        (method, name, arguments): (&str, &str, &str),
        work: F,
    ) -> Result<F::Output, RoundEnd> {
        let mut work = std::pin::pin!(work);
        loop {
            tokio::select! {
                biased;
                output = &mut work => return Ok(output),
                () = self.wants_to_end() => {
                    if let Some(end) = self.end(codec, method, name, arguments) {
                        return Err(end);
                    }
                }
            }
        }
    }

    /// Records an unanswered ask and never resolves (the call is abandoned).
    async fn wait_for_round(&self, key: String, request: InputRequest) -> Result<Answer, AskError> {
        self.lock().asked.insert(key, request);
        self.wake.notify_one();
        std::future::pending().await
    }

    /// Records an answer that is not what was asked and never resolves.
    async fn reject(
        &self,
        key: &str,
        what: &str,
        error: impl std::fmt::Display,
    ) -> Result<Answer, AskError> {
        self.lock().invalid.get_or_insert_with(|| {
            ErrorData::invalid_params(
                format!("inputResponses.{key} is not a {what} result: {error}"),
                None,
            )
        });
        self.wake.notify_one();
        std::future::pending().await
    }
}

#[async_trait]
impl Asker for RoundAsker {
    async fn ask(&self, input: Input) -> Result<Answer, AskError> {
        if let Some(what) = missing_capability(self.capabilities.as_ref(), &input) {
            require_capability(
                self.lock().undeclared.get_or_insert_with(Default::default),
                &input,
            );
            return Err(AskError::NotDeclared { what });
        }
        let key = input.key().unwrap_or(input.what()).to_owned();
        let answer = self.answers.get(&key).cloned();
        let request = input_request(&input)?;
        let Some(value) = answer else {
            return self.wait_for_round(key, request).await;
        };
        match parse_answer(&input, value.clone()) {
            Ok(answer) => {
                self.lock().used.insert(key, value);
                Ok(answer)
            }
            Err(error) => self.reject(&key, input_kind(&request), error).await,
        }
    }
}

/// An ask as the request of an `inputRequests` map (an `input_required` round, a task's).
pub(crate) fn input_request(input: &Input) -> Result<InputRequest, AskError> {
    Ok(match input {
        Input::Sampling(request) => {
            InputRequest::CreateMessage(CreateMessageRequest::new(sampling_params(request)?))
        }
        Input::Elicitation(request) => {
            InputRequest::Elicitation(ElicitRequest::new(elicit_params(request)?))
        }
        Input::Roots(_) => InputRequest::ListRoots(ListRootsRequest::default()),
    })
}

/// The client's answer to `input` (an `inputResponses` entry) as the project's [`Answer`];
/// the error says why it is not the result of what was asked.
pub(crate) fn parse_answer(input: &Input, value: Value) -> Result<Answer, String> {
    match input {
        Input::Sampling(_) => serde_json::from_value::<CreateMessageResult>(value)
            .map_err(|e| e.to_string())
            .and_then(|result| sampling_reply(result).map_err(|e| e.to_string()))
            .map(Answer::Sampling),
        Input::Elicitation(_) => serde_json::from_value::<ElicitResult>(value)
            .map_err(|e| e.to_string())
            .and_then(|result| elicitation_answer(result).map_err(|e| e.to_string()))
            .map(Answer::Elicitation),
        Input::Roots(_) => serde_json::from_value::<ListRootsResult>(value)
            .map_err(|e| e.to_string())
            .map(|result| Answer::Roots(roots(result))),
    }
}

pub(crate) fn input_kind(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::CreateMessage(_) => "sampling/createMessage",
        InputRequest::Elicitation(_) => "elicitation/create",
        InputRequest::ListRoots(_) => "roots/list",
        _ => "input",
    }
}
