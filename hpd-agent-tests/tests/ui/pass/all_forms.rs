//! Every form of the harness macros, compiled with warnings, missing docs, unused
//! qualifications and clippy's pedantic group denied. Built twice: as a trybuild pass case
//! (`tests/ui.rs`, rustc only) and as a module of `tests/lint.rs`, which
//! `cargo clippy --all-targets -- -D warnings` checks with clippy.
#![deny(warnings, missing_docs, unused_qualifications, clippy::pedantic)]

use hpd_agent::chat::ToolAnnotations;
use hpd_agent::harness::HarnessInfo;
use hpd_agent::{
    AgentConfig, CancellationToken, FunctionContext, Middleware, SubAgent, ai_function, collapse,
    sub_agent, tool_harness,
};
use serde::Deserialize;

/// A structured return value: its schema is the function's output schema.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Reading {
    /// Degrees Celsius.
    pub celsius: f64,
}

/// A return value that serializes but has no schema.
#[derive(serde::Serialize)]
pub struct Untyped {
    /// A count.
    pub count: u32,
}

/// Every kind of return value: parts, images, results, schema'd and plain values.
#[derive(Default)]
pub struct Media;

#[tool_harness]
impl Media {
    /// An image.
    #[ai_function]
    fn snapshot(&self) -> hpd_agent::tool::Image {
        hpd_agent::tool::Image::png(vec![1, 2, 3])
    }

    /// Several parts.
    #[ai_function]
    async fn parts(&self) -> Vec<hpd_agent::chat::ContentPart> {
        std::future::ready(()).await;
        vec![
            hpd_agent::chat::ContentPart::text("a"),
            hpd_agent::chat::ContentPart::audio("audio/wav", vec![0]),
        ]
    }

    /// A whole result, or an error.
    #[ai_function]
    fn result(&self, fail: bool) -> Result<hpd_agent::ToolResult, String> {
        if fail {
            Err("failed".to_owned())
        } else {
            Ok(hpd_agent::ToolResult::ok("fine"))
        }
    }

    /// A structured value, or an error.
    #[ai_function]
    fn read(&self, celsius: f64) -> Result<Reading, std::io::Error> {
        if celsius.is_nan() {
            return Err(std::io::Error::other("no reading"));
        }
        Ok(Reading { celsius })
    }

    /// A structured value returned by an async method.
    #[ai_function]
    async fn read_later(&self) -> Reading {
        std::future::ready(()).await;
        Reading { celsius: 3.0 }
    }

    /// A value without a schema.
    #[ai_function]
    fn untyped(&self) -> Untyped {
        Untyped { count: 1 }
    }

    /// A value whose type is not named.
    #[ai_function]
    fn opaque(&self) -> impl serde::Serialize + use<> {
        [1, 2]
    }

    /// A borrowed text.
    #[ai_function]
    fn label(&self) -> &'static str {
        "label"
    }
}

/// Plain harness, everything defaulted.
#[derive(Default)]
pub struct Plain;

#[tool_harness]
impl Plain {
    /// Adds two integers.
    #[ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Says hello.
    ///
    /// Second paragraph.
    #[ai_function(name = "hello", timeout_ms = 1000)]
    async fn greet(
        &self,
        #[ai_description("Who to greet.")] who: String,
        ctx: &FunctionContext,
        token: CancellationToken,
    ) -> String {
        tokio::task::yield_now().await;
        format!(
            "hello {who} from {} ({})",
            ctx.function_name(),
            token.is_cancelled()
        )
    }

    /// Deletes everything (a person approves each call).
    #[ai_function(requires_approval, destructive, idempotent = true)]
    fn wipe(&self) {}

    /// Needs no approval, said explicitly; changes nothing and reaches nothing outside.
    #[ai_function(
        requires_approval = false,
        timeout_ms = 5,
        read_only,
        open_world = false
    )]
    fn peek(&self) {}

    #[ai_function(description = "Fails on zero.", requires_approval = true)]
    fn checked(&self, n: u32) -> Result<u32, String> {
        if n == 0 {
            Err("zero".to_owned())
        } else {
            Ok(n)
        }
    }

    #[hpd_agent::ai_function]
    fn r#type(&self, r#type: Option<String>) {
        let _ = r#type;
    }

    /// Not a tool.
    fn helper(&self) -> u8 {
        self.add_one(1)
    }

    fn add_one(&self, n: u8) -> u8 {
        let _ = self;
        n + 1
    }
}

/// The config of [`Configured`].
#[derive(Deserialize)]
pub struct Settings {
    /// A limit.
    #[serde(default)]
    pub limit: u32,
}

/// The metadata of [`Configured`].
#[derive(Deserialize)]
pub struct Meta {
    /// A provider name.
    pub provider: String,
    /// Whether the optional function exists.
    pub enabled: bool,
}

/// Plain harness with a name, metadata, a config constructor, a condition and a template.
pub struct Configured {
    limit: u32,
}

#[tool_harness(name = "configured", metadata = Meta)]
impl Configured {
    /// Creates it from its config.
    #[must_use]
    pub fn new(config: Settings) -> Self {
        Configured {
            limit: config.limit,
        }
    }

    #[ai_function(description = "Searches {metadata.provider} ({{at most}} a few).")]
    fn search(&self, query: String) -> String {
        format!("{query} {}", self.limit)
    }

    /// Optional.
    #[ai_function(condition = metadata.enabled && !metadata.provider.is_empty())]
    fn optional(&self) -> u32 {
        self.limit
    }
}

/// Scoped middleware created by `Default`.
#[derive(Default)]
pub struct Quiet;

impl Middleware for Quiet {}

mod audit {
    /// Scoped middleware created from a config.
    pub struct Audit;

    impl hpd_agent::Middleware for Audit {}

    impl hpd_agent::middleware::ConfigurableMiddleware for Audit {
        type Config = serde_json::Value;

        fn from_config(config: serde_json::Value) -> Self {
            let _ = config;
            Audit
        }
    }
}

/// Collapsed harness with every option and a plain constructor.
pub struct Collapsed {
    base: i64,
}

#[collapse(
    "Collapsed operations",
    name = "collapsed",
    metadata = Meta,
    function_result = "Collapsed tools are active.",
    system_prompt = "Be careful.",
    middlewares = [Quiet, audit::Audit]
)]
impl Collapsed {
    fn new() -> Self {
        Collapsed { base: 1 }
    }

    /// Increments with {metadata.provider}.
    #[ai_function]
    async fn increment(&self, by: i64) -> Result<i64, std::io::Error> {
        tokio::task::yield_now().await;
        if by == i64::MAX {
            Err(std::io::Error::other("overflow"))
        } else {
            Ok(self.base + by)
        }
    }

    /// Delegates to a child agent.
    #[sub_agent(name = "delegate")]
    fn delegate_agent(&self) -> SubAgent {
        SubAgent::new("delegate", "Delegates", AgentConfig::default())
    }
}

/// A harness without functions.
#[derive(Default)]
pub struct Empty;

#[tool_harness]
impl Empty {}

mod with_prelude {
    use hpd_agent::prelude::*;

    /// A harness written with the prelude.
    #[derive(Default)]
    pub struct Prelude;

    #[collapse("Prelude tools")]
    impl Prelude {
        #[ai_function]
        fn ping(&self) -> &'static str {
            "pong"
        }

        #[hpd_agent::sub_agent]
        fn helper(&self) -> SubAgent {
            SubAgent::new("helper", "Helps", hpd_agent::AgentConfig::default())
        }
    }
}

/// Checks the registry sees every harness above.
///
/// # Panics
///
/// When one is missing.
pub fn main() {
    let find = |name: &str| HarnessInfo::find(name).unwrap_or_else(|e| panic!("{e}"));
    let with_schema: Vec<bool> = find("Media")
        .output_schemas()
        .iter()
        .map(Option::is_some)
        .collect();
    assert_eq!(
        with_schema,
        [false, false, false, true, true, false, false, false]
    );
    for name in [
        "Plain",
        "configured",
        "collapsed",
        "Prelude",
        "Empty",
        "Media",
    ] {
        let _ = find(name);
    }
    assert_eq!(Plain.helper(), 2);
    assert_eq!(HarnessInfo::of::<Configured>().name(), "configured");
    let functions = HarnessInfo::of::<Plain>().functions().unwrap();
    let approval: Vec<(&str, bool)> = functions
        .iter()
        .map(|f| (f.name(), f.requires_approval()))
        .collect();
    assert_eq!(
        approval,
        [
            ("add", false),
            ("hello", false),
            ("wipe", true),
            ("peek", false),
            ("checked", true),
            ("type", false)
        ]
    );
    // What each says it does to its environment: written options only, as MCP's hints.
    let annotations: Vec<(&str, ToolAnnotations)> = functions
        .iter()
        .map(|f| (f.name(), f.definition().annotations))
        .collect();
    assert_eq!(
        annotations[2..4],
        [
            (
                "wipe",
                ToolAnnotations::new()
                    .with_destructive(true)
                    .with_idempotent(true)
            ),
            ("peek", ToolAnnotations::read_only().with_open_world(false)),
        ]
    );
    assert!(annotations[2].1.changes_things() && !annotations[3].1.changes_things());
    assert!(annotations[0].1.is_empty());
    let _ = with_prelude::Prelude;
    let members: Vec<&str> = find("collapsed").function_names().collect();
    assert_eq!(members, ["increment", "delegate"]);
}
