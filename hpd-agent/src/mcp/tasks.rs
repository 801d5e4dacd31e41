//! Served calls as MCP tasks: the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663). A call of a function with [`TaskSupport`] answers at once with a task; the client
//! polls `tasks/get` for its status and, once it is done, its result; answers the function's
//! asks with `tasks/update`; and cancels it with `tasks/cancel`.
//!
//! # Where task state lives
//!
//! In the memory of the running server: one [`TaskStore`] per
//! [`McpServer::serve_http`](super::McpServer::serve_http) (shared by every session and every
//! stateless request it serves) or [`serve_stdio`](super::McpServer::serve_stdio). Task ids
//! are 128 random bits and name no session, so any request of that server process can reach a
//! task by its id; another process (a restarted server, a second replica behind a load
//! balancer) does not know it and answers `-32602`. A task is kept for its `ttlMs` from its
//! creation, then removed (a call still running then is cancelled); at most
//! [`McpServer::with_max_tasks`](super::McpServer::with_max_tasks) are kept at once.
//!
//! rmcp 3.11 has a task manager (`rmcp::task_manager`), but it keeps any number of tasks, has
//! no way to remove one or to count the finished ones, and reports no change of status; this
//! store needs all three (the bound, the expiry that cancels the call, status messages from
//! the function's progress reports). It uses rmcp's task types for everything on the wire.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ClientCapabilities, DetailedTask, InputRequest, InputResponses, JsonObject,
    Task, TaskPayload, TaskStatus,
};
use rmcp::task_manager::current_timestamp;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::asking::{
    RoundAsker, input_kind, input_request, missing_capability, parse_answer, require_capability,
};
use crate::events::{AgentEvent, EventSink};
use crate::tool::{Answer, AskError, Asker, Input};

/// How long a task is kept, from its creation, unless
/// [`McpServer::with_task_ttl`](super::McpServer::with_task_ttl) says otherwise: one hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

/// How many tasks a server keeps at once unless
/// [`McpServer::with_max_tasks`](super::McpServer::with_max_tasks) says otherwise.
pub const DEFAULT_MAX_TASKS: usize = 1000;

/// The polling interval a task suggests to the client.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Whether a served function runs as an MCP task (the 2026-07-28 tasks extension), set per
/// function with [`McpServer::with_task_support`](super::McpServer::with_task_support).
///
/// The three modes are those the tasks specification names for a tool: a task is created
/// only for a request of the 2026-07-28 revision whose client declares the extension
/// (`io.modelcontextprotocol/tasks` in its per-request capabilities); the revisions with
/// sessions (2025-11-25 and older) have no such extension, so there a call never becomes a
/// task. The 2026-07-28 extension lists no per-tool field for the mode (the older
/// experimental tasks' `execution.taskSupport` is gone), so the mode is not in `tools/list`:
/// a client learns it from the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never a task: the call answers with its result (the default for every function).
    #[default]
    Forbidden,
    /// A task when the client declares the extension, a plain call otherwise.
    Optional,
    /// Only a task: a request whose client does not declare the extension is refused with
    /// `-32021` (missing required client capability), naming the extension, before the
    /// function runs.
    Required,
}

/// How one function runs as a task.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FunctionTasks {
    pub(crate) support: TaskSupport,
    /// The call gathers its input in `input_required` rounds first and becomes a task at
    /// [`FunctionContext::continue_as_task`](crate::FunctionContext::continue_as_task).
    pub(crate) after_input: bool,
}

/// The task settings of a server: what [`McpServer`](super::McpServer) was given.
#[derive(Debug, Clone)]
pub(crate) struct TaskSettings {
    pub(crate) functions: HashMap<String, FunctionTasks>,
    pub(crate) ttl: Duration,
    pub(crate) max_tasks: usize,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            functions: HashMap::new(),
            ttl: DEFAULT_TASK_TTL,
            max_tasks: DEFAULT_MAX_TASKS,
        }
    }
}

/// An ask of a task's function that waits for `tasks/update`.
struct Pending {
    request: InputRequest,
    answer: oneshot::Sender<Value>,
}

/// One task.
struct Entry {
    task: Task,
    /// The final state, once there is one.
    terminal: Option<TaskPayload>,
    /// What the function asked and the client has not answered, by key.
    pending: BTreeMap<String, Pending>,
    /// Every key asked so far (keys are unique over a task's life).
    used_keys: HashSet<String>,
    /// Cancels the call.
    cancel: CancellationToken,
    /// When the task is removed.
    expires: Instant,
}

impl Entry {
    fn touch(&mut self) {
        self.task.last_updated_at = current_timestamp();
    }

    fn detailed(&self) -> DetailedTask {
        let payload = match &self.terminal {
            Some(payload) => payload.clone(),
            None if self.pending.is_empty() => TaskPayload::Working,
            None => TaskPayload::InputRequired {
                input_requests: self
                    .pending
                    .iter()
                    .map(|(key, pending)| (key.clone(), pending.request.clone()))
                    .collect(),
            },
        };
        DetailedTask::new(self.task.clone(), payload)
    }
}

/// The tasks of one running server (see the [module](self) on where they live).
pub(crate) struct TaskStore {
    settings: TaskSettings,
    entries: Mutex<HashMap<String, Entry>>,
    /// Cancelled when the server stops: ends every task's call.
    shutdown: CancellationToken,
}

/// How a task's call ended.
pub(crate) enum Ending {
    /// It returned this result (also an error result: a tool error is a completed task).
    Completed(CallToolResult),
    /// A protocol-level failure, as a JSON-RPC error.
    Failed(ErrorData),
    /// `tasks/cancel` (or the server's shutdown) stopped it.
    Cancelled,
}

impl TaskStore {
    pub(crate) fn new(settings: TaskSettings, shutdown: CancellationToken) -> Self {
        TaskStore {
            settings,
            entries: Mutex::new(HashMap::new()),
            shutdown,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether any function may run as a task (the server then declares the extension).
    pub(crate) fn offered(&self) -> bool {
        self.settings
            .functions
            .values()
            .any(|function| function.support != TaskSupport::Forbidden)
    }

    /// How `function` runs as a task.
    pub(crate) fn support(&self, function: &str) -> FunctionTasks {
        self.settings
            .functions
            .get(function)
            .copied()
            .unwrap_or_default()
    }

    /// The token that stops every task of the server.
    pub(crate) fn shutdown(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// Removes the tasks whose time is up, cancelling their calls.
    fn sweep(entries: &mut HashMap<String, Entry>) {
        let now = Instant::now();
        entries.retain(|_, entry| {
            let keep = entry.expires > now;
            if !keep {
                entry.cancel.cancel();
            }
            keep
        });
    }

    /// A new task, `working`, stored before this returns (so a `tasks/get` right after the
    /// answer finds it). `cancel` (a child of [`shutdown`](Self::shutdown)) cancels its
    /// call; the instant is when the task expires.
    ///
    /// # Errors
    ///
    /// `-32603` when the server already keeps [`TaskSettings::max_tasks`] tasks.
    pub(crate) fn create(&self, cancel: &CancellationToken) -> Result<(Task, Instant), ErrorData> {
        let mut entries = self.lock();
        Self::sweep(&mut entries);
        if entries.len() >= self.settings.max_tasks {
            return Err(ErrorData::internal_error(
                format!(
                    "this server keeps at most {} tasks and holds that many; try again once some have expired (a task is kept {} ms from its creation)",
                    self.settings.max_tasks,
                    self.settings.ttl.as_millis()
                ),
                None,
            ));
        }
        let id = task_id();
        let now = current_timestamp();
        let mut task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now)
            .with_poll_interval_ms(millis(POLL_INTERVAL));
        task.ttl_ms = Some(millis(self.settings.ttl));
        let expires = Instant::now() + self.settings.ttl;
        entries.insert(
            id,
            Entry {
                task: task.clone(),
                terminal: None,
                pending: BTreeMap::new(),
                used_keys: HashSet::new(),
                cancel: cancel.clone(),
                expires,
            },
        );
        Ok((task, expires))
    }

    /// Records how a task's call ended.
    pub(crate) fn finish(&self, id: &str, ending: Ending) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(id) else {
            return;
        };
        let (payload, message) = match ending {
            Ending::Completed(result) => {
                let result = match serde_json::to_value(&result) {
                    Ok(Value::Object(map)) => map,
                    _ => JsonObject::new(),
                };
                (TaskPayload::Completed { result }, None)
            }
            Ending::Failed(error) => {
                let message = error.message.to_string();
                let error = match serde_json::to_value(&error) {
                    Ok(Value::Object(map)) => map,
                    _ => JsonObject::new(),
                };
                (TaskPayload::Failed { error }, Some(message))
            }
            Ending::Cancelled => (
                TaskPayload::Cancelled,
                Some("cancelled before it finished".to_owned()),
            ),
        };
        entry.task.status = payload.status();
        entry.task.status_message = message;
        entry.terminal = Some(payload);
        entry.pending.clear();
        entry.touch();
    }

    /// Removes a task (its time is up).
    pub(crate) fn remove(&self, id: &str) {
        if let Some(entry) = self.lock().remove(id) {
            entry.cancel.cancel();
        }
    }

    /// `tasks/get`.
    ///
    /// # Errors
    ///
    /// `-32602` for an id this server does not keep.
    pub(crate) fn get(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        let mut entries = self.lock();
        Self::sweep(&mut entries);
        entries
            .get(id)
            .map(Entry::detailed)
            .ok_or_else(|| unknown_task(id))
    }

    /// `tasks/update`: answers the outstanding asks the responses name; other keys are
    /// ignored, as the extension says.
    ///
    /// # Errors
    ///
    /// `-32602` for an id this server does not keep.
    pub(crate) fn update(&self, id: &str, responses: InputResponses) -> Result<(), ErrorData> {
        let mut entries = self.lock();
        Self::sweep(&mut entries);
        let entry = entries.get_mut(id).ok_or_else(|| unknown_task(id))?;
        for (key, value) in responses {
            if let Some(pending) = entry.pending.remove(&key) {
                // A call that stopped waiting (cancelled) drops the answer.
                let _ = pending.answer.send(value);
            }
        }
        if entry.terminal.is_none() {
            entry.task.status = entry.detailed().status();
            entry.touch();
        }
        Ok(())
    }

    /// `tasks/cancel`: cancels the call (its function sees its
    /// [`cancellation_token`](crate::FunctionContext::cancellation_token)); the task is
    /// `cancelled` once the call stopped. A finished task stays as it is.
    ///
    /// # Errors
    ///
    /// `-32602` for an id this server does not keep.
    pub(crate) fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        let mut entries = self.lock();
        Self::sweep(&mut entries);
        let entry = entries.get_mut(id).ok_or_else(|| unknown_task(id))?;
        if entry.terminal.is_none() {
            entry.cancel.cancel();
            // Asks waiting for an answer end (their senders are dropped).
            entry.pending.clear();
            entry.touch();
        }
        Ok(())
    }

    /// Sets a running task's status message.
    fn set_message(&self, id: &str, message: String) {
        if let Some(entry) = self.lock().get_mut(id)
            && entry.terminal.is_none()
        {
            entry.task.status_message = Some(message);
            entry.touch();
        }
    }

    /// Records an ask of a task's function under a key not used before in the task, and
    /// returns where the answer arrives.
    fn ask(
        &self,
        id: &str,
        key: &str,
        request: InputRequest,
    ) -> Result<oneshot::Receiver<Value>, AskError> {
        let mut entries = self.lock();
        let entry = entries.get_mut(id).ok_or_else(|| {
            AskError::Failed("the task has expired; its asks cannot be answered".to_owned())
        })?;
        if entry.cancel.is_cancelled() {
            return Err(AskError::Failed("the task was cancelled".to_owned()));
        }
        let mut unique = key.to_owned();
        let mut n = 1;
        while entry.used_keys.contains(&unique) {
            n += 1;
            unique = format!("{key}-{n}");
        }
        entry.used_keys.insert(unique.clone());
        let (answer, receiver) = oneshot::channel();
        entry.pending.insert(unique, Pending { request, answer });
        entry.task.status = TaskStatus::InputRequired;
        entry.touch();
        Ok(receiver)
    }
}

/// `-32602` for a task id the server does not keep.
fn unknown_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "unknown task '{id}': this server process keeps no task of that id (it never made one, or the task expired)"
        ),
        Some(serde_json::json!({ "taskId": id })),
    )
}

/// 128 random bits, in hex: ids a client cannot guess (a task's id is all it takes to reach
/// it).
fn task_id() -> String {
    let mut bytes = [0_u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS source failed: the standard library's randomly seeded hasher.
        use std::hash::BuildHasher;
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let word = std::collections::hash_map::RandomState::new().hash_one(i);
            chunk.copy_from_slice(&word.to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// The asks of a task's function: each one is an outstanding `inputRequests` entry of the
/// task (`input_required`) until `tasks/update` answers it.
pub(crate) struct TaskAsker {
    pub(crate) store: Arc<TaskStore>,
    pub(crate) id: String,
    /// The capabilities of the request that created the task.
    pub(crate) capabilities: Option<ClientCapabilities>,
    /// The capabilities of the asks the client did not declare, if any.
    pub(crate) undeclared: Mutex<Option<ClientCapabilities>>,
}

impl TaskAsker {
    /// `-32021` for a call that failed after asking what the client did not declare (as a
    /// call without a task is answered).
    pub(crate) fn missing_capabilities(
        &self,
        result: &crate::tool::ToolResult,
    ) -> Option<ErrorData> {
        if !result.is_error {
            return None;
        }
        let required = self
            .undeclared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        let mut error = ErrorData::missing_required_client_capability(required);
        error.message = format!("{}: {}", error.message, result.text).into();
        Some(error)
    }
}

#[async_trait]
impl Asker for TaskAsker {
    async fn ask(&self, input: Input) -> Result<Answer, AskError> {
        if let Some(what) = missing_capability(self.capabilities.as_ref(), &input) {
            require_capability(
                self.undeclared
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(Default::default),
                &input,
            );
            return Err(AskError::NotDeclared { what });
        }
        let request = input_request(&input)?;
        let kind = input_kind(&request);
        let key = input.key().unwrap_or(input.what()).to_owned();
        let receiver = self.store.ask(&self.id, &key, request)?;
        let value = receiver
            .await
            .map_err(|_| AskError::Failed("the task was cancelled".to_owned()))?;
        parse_answer(&input, value).map_err(|error| {
            AskError::InvalidAnswer(format!(
                "the client's answer is not a {kind} result: {error}"
            ))
        })
    }
}

/// The events of a task's call: its progress reports become the task's status message
/// (progress and log notifications are not sent for tasks).
pub(crate) struct TaskReporter {
    pub(crate) store: Arc<TaskStore>,
    /// The task, once the call is one.
    pub(crate) id: OnceLock<String>,
}

impl EventSink for TaskReporter {
    fn emit(&self, event: &AgentEvent) {
        let Some(id) = self.id.get() else {
            return;
        };
        if let AgentEvent::ToolProgress {
            progress,
            total,
            message,
            ..
        } = event
        {
            let mut text = match total {
                Some(total) => format!("{progress}/{total}"),
                None => format!("{progress}"),
            };
            if let Some(message) = message {
                text.push_str(": ");
                text.push_str(message);
            }
            self.store.set_message(id, text);
        }
    }

    fn wants_events(&self) -> bool {
        true
    }
}

/// The asks of a call that gathers its input before it becomes a task
/// ([`McpServer::with_task_after_input`](super::McpServer::with_task_after_input)): the
/// request's `input_required` rounds until the function calls
/// [`continue_as_task`](crate::FunctionContext::continue_as_task), the task's asks after.
pub(crate) struct SwitchingAsker {
    pub(crate) round: Arc<RoundAsker>,
    task: OnceLock<Arc<TaskAsker>>,
    wanted: AtomicBool,
    wake: tokio::sync::Notify,
}

impl SwitchingAsker {
    pub(crate) fn new(round: Arc<RoundAsker>) -> Self {
        SwitchingAsker {
            round,
            task: OnceLock::new(),
            wanted: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
        }
    }

    /// Resolves once the function called `continue_as_task`.
    pub(crate) async fn wants_task(&self) {
        while !self.wanted.load(Ordering::Acquire) {
            self.wake.notified().await;
        }
    }

    /// From now on the task's asker answers.
    pub(crate) fn become_task(&self, task: Arc<TaskAsker>) {
        let _ = self.task.set(task);
    }
}

#[async_trait]
impl Asker for SwitchingAsker {
    async fn ask(&self, input: Input) -> Result<Answer, AskError> {
        match self.task.get() {
            Some(task) => task.ask(input).await,
            None => self.round.ask(input).await,
        }
    }

    fn continue_as_task(&self) {
        if !self.wanted.swap(true, Ordering::AcqRel) {
            self.wake.notify_one();
        }
    }
}
