//! Fixtures of the conformance scenarios and behaviour tests: the harnesses and middleware that
//! `hpd-agent-tests/conformance/README.md` ("Fixtures") describes, with exactly its names, descriptions
//! and return texts, and the process-wide logs they write.
//!
//! Every fixture function appends `"{Harness}.{function}"` to the *execution log*; every fixture
//! middleware appends `{label}:{hook}` lines (`:{function}` added for `before_function`,
//! `wrap_function_call` and `after_function`) to the *middleware log*. [`reset_logs`] clears both
//! and restarts the [`DbAuditMiddleware`] instance numbers; tests that read the logs run one
//! after another.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use hpd_agent::chat::ToolCall;
use hpd_agent::prelude::*;
use hpd_agent::{
    Middleware, ToolResult, middleware::ConfigurableMiddleware, middleware::FunctionCall,
    middleware::HookResult, middleware::IterationInfo, middleware::MiddlewareError,
    middleware::Next, middleware::TurnInfo, middleware::TurnOutcome, tool::FunctionFailure,
};
use serde::Deserialize;

/// Says why a test is skipped, on the process's real stderr, and so in the output of a plain
/// `cargo test`: libtest captures what `print!` and `eprint!` write in a passing test, which
/// would hide the reason. `.ci/run` fails when a test of its run says it was skipped.
///
/// ```
/// hpd_agent_tests::skip!("skipped: {} is not set", "HPD_EXAMPLE_URL");
/// ```
#[macro_export]
macro_rules! skip {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

static EXECUTIONS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static MIDDLEWARE_LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
static DB_AUDIT_INSTANCES: AtomicUsize = AtomicUsize::new(0);

fn lock(log: &'static Mutex<Vec<String>>) -> MutexGuard<'static, Vec<String>> {
    // A panicking fixture (FaultTools.explode) must not poison the logs for later scenarios.
    log.lock().unwrap_or_else(PoisonError::into_inner)
}

fn record_execution(harness: &str, function: &str) {
    lock(&EXECUTIONS).push(format!("{harness}.{function}"));
}

fn record_hook(label: &str, hook: &str, function: Option<&str>) {
    let line = match function {
        Some(function) => format!("{label}:{hook}:{function}"),
        None => format!("{label}:{hook}"),
    };
    lock(&MIDDLEWARE_LOG).push(line);
}

/// Clears the execution log and the middleware log, and restarts [`DbAuditMiddleware`] instance
/// numbers at 1. Call it before each scenario.
///
/// ```
/// hpd_agent_tests::reset_logs();
/// assert!(hpd_agent_tests::executions().is_empty());
/// assert!(hpd_agent_tests::middleware_log().is_empty());
/// ```
pub fn reset_logs() {
    lock(&EXECUTIONS).clear();
    lock(&MIDDLEWARE_LOG).clear();
    DB_AUDIT_INSTANCES.store(0, Ordering::SeqCst);
}

/// The execution log so far: `"{Harness}.{function}"` per fixture function call, in call order.
#[must_use]
pub fn executions() -> Vec<String> {
    lock(&EXECUTIONS).clone()
}

/// Returns the execution log and clears it.
#[must_use]
pub fn take_executions() -> Vec<String> {
    std::mem::take(&mut *lock(&EXECUTIONS))
}

/// The middleware log so far, one line per hook call, in call order.
#[must_use]
pub fn middleware_log() -> Vec<String> {
    lock(&MIDDLEWARE_LOG).clone()
}

/// Returns the middleware log and clears it.
#[must_use]
pub fn take_middleware_log() -> Vec<String> {
    std::mem::take(&mut *lock(&MIDDLEWARE_LOG))
}

/// Collapsed math harness: `add`, `multiply`, `divide`.
#[derive(Debug, Default)]
pub struct MathTools;

#[collapse(
    "Math operations",
    function_result = "Math tools are active.",
    system_prompt = "Use exact arithmetic and show units when relevant."
)]
impl MathTools {
    /// Adds two integers.
    #[ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        record_execution("MathTools", "add");
        a + b
    }

    /// Multiplies two integers.
    #[ai_function]
    fn multiply(&self, a: i64, b: i64) -> i64 {
        record_execution("MathTools", "multiply");
        a * b
    }

    /// Divides a by b.
    #[ai_function]
    fn divide(&self, a: f64, b: f64) -> Result<f64, String> {
        record_execution("MathTools", "divide");
        if b == 0.0 {
            Err("division by zero".to_owned())
        } else {
            Ok(a / b)
        }
    }
}

/// Plain weather harness: `get_weather`, `get_forecast`.
#[derive(Debug, Default)]
pub struct WeatherTools;

#[tool_harness]
impl WeatherTools {
    /// Gets the current weather for a city.
    #[ai_function(name = "get_weather")]
    fn get_weather(
        &self,
        #[ai_description("The city to get weather for.")] city: String,
    ) -> String {
        record_execution("WeatherTools", "get_weather");
        format!("It is sunny in {city}.")
    }

    /// Gets a forecast for a city.
    #[ai_function]
    fn get_forecast(&self, city: String, days: u32) -> String {
        record_execution("WeatherTools", "get_forecast");
        format!("{days}-day forecast for {city}: sunny.")
    }
}

/// The config of [`SearchTools`] (`{"MaxResults": 3}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SearchToolsConfig {
    /// How many results a search reports; 5 when not given.
    #[serde(default = "default_max_results")]
    pub max_results: u32,
}

fn default_max_results() -> u32 {
    5
}

/// The metadata of [`SearchTools`] (`{"DefaultProvider": "brave", "HasTavilyProvider": false}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SearchMetadata {
    /// Named in the description of `search`.
    pub default_provider: String,
    /// Whether `tavily_search` exists.
    pub has_tavily_provider: bool,
}

/// Plain search harness with a config constructor and metadata: `search`, `tavily_search`.
#[derive(Debug)]
pub struct SearchTools {
    max_results: u32,
}

#[tool_harness(metadata = SearchMetadata)]
impl SearchTools {
    /// Creates the harness from its config.
    #[must_use]
    pub fn new(config: SearchToolsConfig) -> Self {
        SearchTools {
            max_results: config.max_results,
        }
    }

    #[ai_function(description = "Search the web with {metadata.default_provider}.")]
    fn search(&self, query: String) -> String {
        record_execution("SearchTools", "search");
        format!("{} results for '{query}'", self.max_results)
    }

    /// Searches with Tavily.
    #[ai_function(condition = metadata.has_tavily_provider)]
    fn tavily_search(&self, query: String) -> String {
        record_execution("SearchTools", "tavily_search");
        format!("tavily: {query}")
    }
}

/// Collapsed database harness guarded by [`DbAuditMiddleware`]: `query`.
#[derive(Debug, Default)]
pub struct DatabaseTools;

#[collapse("Database operations", middlewares = [DbAuditMiddleware])]
impl DatabaseTools {
    /// Runs a read-only SQL query.
    #[ai_function]
    fn query(&self, sql: String) -> String {
        let _ = sql;
        record_execution("DatabaseTools", "query");
        "result".to_owned()
    }
}

/// The metadata of [`FileTools`] (`{"AllowWrites": true}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FileMetadata {
    /// Whether `write_file` exists.
    pub allow_writes: bool,
}

/// Collapsed file harness with metadata: `read_file`, `write_file`.
#[derive(Debug, Default)]
pub struct FileTools;

#[collapse(
    "File operations",
    system_prompt = "Paths are relative to the workspace.",
    metadata = FileMetadata
)]
impl FileTools {
    /// Reads a file.
    #[ai_function]
    fn read_file(&self, path: String) -> String {
        record_execution("FileTools", "read_file");
        format!("contents of {path}")
    }

    /// Writes a file.
    #[ai_function(condition = metadata.allow_writes)]
    fn write_file(&self, path: String, text: String) -> String {
        let _ = text;
        record_execution("FileTools", "write_file");
        format!("wrote {path}")
    }
}

/// Plain harness for failures: `explode` (panics), `echo`, `ping`.
#[derive(Debug, Default)]
pub struct FaultTools;

#[tool_harness]
impl FaultTools {
    /// Always panics.
    #[ai_function]
    fn explode(&self) -> String {
        record_execution("FaultTools", "explode");
        panic!("secret panic payload")
    }

    /// Echoes text.
    #[ai_function]
    fn echo(&self, text: String) -> String {
        record_execution("FaultTools", "echo");
        text
    }

    /// Answers pong.
    #[ai_function]
    fn ping(&self) -> String {
        record_execution("FaultTools", "ping");
        "pong".to_owned()
    }
}

/// The config of [`DbAuditMiddleware`] (`{"AuditLevel": "Detailed"}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DbAuditMiddlewareConfig {
    /// Shown in the log lines; `Basic` when not given.
    #[serde(default = "default_audit_level")]
    pub audit_level: String,
}

fn default_audit_level() -> String {
    "Basic".to_owned()
}

/// Scoped middleware of [`DatabaseTools`], created from its config. Instance `n` (1, 2, ... since
/// the last [`reset_logs`]) logs `DbAudit#{n}[{audit_level}]:{hook}`.
#[derive(Debug)]
pub struct DbAuditMiddleware {
    label: String,
}

impl DbAuditMiddleware {
    /// The number of this instance, counted from 1 since the last [`reset_logs`].
    #[must_use]
    pub fn label(&self) -> &str {
        &self.label
    }
}

impl ConfigurableMiddleware for DbAuditMiddleware {
    type Config = DbAuditMiddlewareConfig;

    fn from_config(config: DbAuditMiddlewareConfig) -> Self {
        let n = DB_AUDIT_INSTANCES.fetch_add(1, Ordering::SeqCst) + 1;
        DbAuditMiddleware {
            label: format!("DbAudit#{n}[{}]", config.audit_level),
        }
    }
}

/// Middleware that logs `{label}:{hook}` for every hook and blocks the calls of the functions
/// in its block list (default blocked text). Used as global or code-added scoped middleware.
#[derive(Debug, Clone)]
pub struct RecordingMiddleware {
    label: String,
    block: Vec<String>,
}

impl RecordingMiddleware {
    /// A middleware logging under `label` and blocking nothing.
    #[must_use]
    pub fn new(label: impl Into<String>) -> Self {
        RecordingMiddleware {
            label: label.into(),
            block: Vec::new(),
        }
    }

    /// Blocks the calls of these function names in `before_function`.
    #[must_use]
    pub fn blocking<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.block.extend(functions.into_iter().map(Into::into));
        self
    }

    /// The label of its log lines.
    #[must_use]
    pub fn label(&self) -> &str {
        &self.label
    }
}

/// Implements every hook: log on entry, then behave as the default (`wrap_function_call`
/// calls `next.run()`); `before_function` also asks the type's `block` method.
macro_rules! logging_middleware {
    ($ty:ty) => {
        #[async_trait]
        impl Middleware for $ty {
            async fn before_message_turn(&self, _turn: &TurnInfo) -> HookResult {
                record_hook(&self.label, "before_message_turn", None);
                Ok(())
            }

            async fn after_message_turn(
                &self,
                _turn: &TurnInfo,
                _outcome: TurnOutcome<'_>,
            ) -> HookResult {
                record_hook(&self.label, "after_message_turn", None);
                Ok(())
            }

            async fn before_iteration(&self, _iteration: &IterationInfo) -> HookResult {
                record_hook(&self.label, "before_iteration", None);
                Ok(())
            }

            async fn after_iteration(&self, _iteration: &IterationInfo) -> HookResult {
                record_hook(&self.label, "after_iteration", None);
                Ok(())
            }

            async fn before_tool_execution(
                &self,
                _iteration: &IterationInfo,
                _calls: &[ToolCall],
            ) -> HookResult {
                record_hook(&self.label, "before_tool_execution", None);
                Ok(())
            }

            async fn before_parallel_batch(
                &self,
                _iteration: &IterationInfo,
                _calls: &[FunctionCall],
            ) -> HookResult {
                record_hook(&self.label, "before_parallel_batch", None);
                Ok(())
            }

            async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
                record_hook(&self.label, "before_function", Some(call.function_name()));
                self.block(call);
                Ok(())
            }

            async fn wrap_function_call(
                &self,
                call: &FunctionCall,
                next: Next<'_>,
            ) -> Result<ToolResult, MiddlewareError> {
                record_hook(
                    &self.label,
                    "wrap_function_call",
                    Some(call.function_name()),
                );
                next.run().await
            }

            async fn on_error(
                &self,
                _call: &FunctionCall,
                _failure: &FunctionFailure,
            ) -> HookResult {
                record_hook(&self.label, "on_error", None);
                Ok(())
            }

            async fn after_function(
                &self,
                call: &FunctionCall,
                _result: &mut ToolResult,
            ) -> HookResult {
                record_hook(&self.label, "after_function", Some(call.function_name()));
                Ok(())
            }
        }
    };
}

impl DbAuditMiddleware {
    #[allow(clippy::unused_self)]
    fn block(&self, _call: &mut FunctionCall) {}
}

impl RecordingMiddleware {
    fn block(&self, call: &mut FunctionCall) {
        if self.block.iter().any(|f| f == call.function_name()) {
            call.block_default();
        }
    }
}

logging_middleware!(DbAuditMiddleware);
logging_middleware!(RecordingMiddleware);

/// A PNG of `width` × `height` pixels, each `rgb(x, y)`, built in memory (8-bit RGB, one
/// uncompressed deflate block per row): test images without binary files in the repository.
#[must_use]
pub fn png(width: u32, height: u32, rgb: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&u32::try_from(data.len()).unwrap_or(u32::MAX).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0); // filter: none
        for x in 0..width {
            raw.extend_from_slice(&rgb(x, y));
        }
    }
    // zlib: header, stored blocks of at most 65535 bytes, Adler-32.
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = u16::try_from(block.len()).unwrap_or(u16::MAX);
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    let (mut a, mut b) = (1_u32, 0_u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB, no interlace
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// CRC-32 (ISO-HDLC, the one PNG uses).
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFF_u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A WAV file of `samples` (16-bit mono PCM at `rate` Hz), built in memory.
#[must_use]
pub fn wav(rate: u32, samples: &[i16]) -> Vec<u8> {
    let data_len = u32::try_from(samples.len() * 2).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(44 + samples.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16_u32.to_le_bytes());
    out.extend_from_slice(&1_u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1_u16.to_le_bytes()); // mono
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 2).to_le_bytes());
    out.extend_from_slice(&2_u16.to_le_bytes());
    out.extend_from_slice(&16_u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for sample in samples {
        out.extend_from_slice(&sample.to_le_bytes());
    }
    out
}
