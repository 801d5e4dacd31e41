//! Harnesses written by a `macro_rules!` macro: the locals the attribute macros generate must
//! resolve whatever hygiene the user's tokens carry (config constructors, metadata conditions
//! and templates, context parameters, async bodies).

use hpd_agent::prelude::*;
use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
use serde::Deserialize;

/// Metadata of the generated harness.
#[derive(Deserialize)]
pub struct Flags {
    /// Whether `shout` is offered.
    pub loud: bool,
    /// A word for the description.
    pub word: String,
}

/// Config of the generated harness.
#[derive(Deserialize)]
pub struct Settings {
    /// A prefix for results.
    #[serde(default)]
    pub prefix: String,
}

macro_rules! make_harness {
    ($name:ident) => {
        /// A harness written by a macro.
        pub struct $name {
            prefix: String,
        }

        #[collapse("Generated tools", metadata = Flags)]
        impl $name {
            fn new(config: Settings) -> Self {
                $name {
                    prefix: config.prefix,
                }
            }

            /// Echoes with {metadata.word}.
            #[ai_function]
            async fn echo(&self, text: String, ctx: &FunctionContext) -> String {
                format!("{}{text} ({})", self.prefix, ctx.function_name())
            }

            /// Shouts.
            #[ai_function(condition = metadata.loud)]
            fn shout(&self, text: String) -> String {
                text.to_uppercase()
            }
        }
    };
}

make_harness!(MacroTools);

#[tokio::test]
async fn a_macro_generated_harness_works() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "MacroTools", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "echo", r#"{"text": "hi"}"#)]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness_reference(
            &hpd_agent::config::ToolHarnessReference::new("MacroTools")
                .with_config(serde_json::json!({"prefix": "> "}))
                .with_metadata(serde_json::json!({"loud": false, "word": "care"})),
        )
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[0].tools[0].description,
        "Generated tools (functions: echo)"
    );
    assert_eq!(requests[1].tool_names(), ["echo"]);
    assert_eq!(requests[1].tools[0].description, "Echoes with care.");
    assert_eq!(requests[2].tool_result("c2"), Some(("> hi (echo)", false)));
}

/// A tree: recursive, so its schema keeps `$defs`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct Tree {
    /// The value.
    pub value: i64,
    /// The subtrees.
    pub children: Vec<Tree>,
}

/// A book, with a field called `title`.
#[derive(Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct Book {
    /// The title.
    pub title: String,
}

fn default_book() -> Book {
    Book {
        title: "Dune".into(),
    }
}

/// A harness of awkward shapes.
#[derive(Default, Deserialize, schemars::JsonSchema)]
pub struct Shapes {
    x: i64,
}

#[tool_harness]
impl Shapes {
    /// Sums a tree.
    #[ai_function]
    fn tree(&self, tree: Tree) -> i64 {
        tree.value + tree.children.iter().map(|c| c.value).sum::<i64>()
    }

    /// Reads a book.
    #[ai_function]
    fn book(&self, #[serde(default = "default_book")] book: Book) -> String {
        book.title
    }

    /**
     * Adds numbers.
     * Second line.
     */
    #[ai_function]
    fn block(&self) {}

    /// Distance along x to another point.
    #[ai_function]
    fn dx(&self, other: Self, more: Vec<Self>) -> i64 {
        other.x - self.x + i64::try_from(more.len()).unwrap_or_default()
    }

    /// Still offered to the model.
    #[ai_function]
    #[deprecated(note = "kept for old prompts")]
    fn old(&self) -> u8 {
        1
    }
}

#[tokio::test]
async fn awkward_shapes_compile_and_describe_themselves() {
    let functions = hpd_agent::harness::HarnessInfo::of::<Shapes>()
        .functions()
        .unwrap();
    let find = |name: &str| functions.iter().find(|f| f.name() == name).unwrap();

    let tree = find("tree").schema().to_string();
    assert!(
        tree.contains("\"$ref\"") && tree.contains("\"$defs\""),
        "{tree}"
    );
    let r = find("tree")
        .call(
            "c1",
            r#"{"tree": {"value": 1, "children": [{"value": 2, "children": []}]}}"#,
            Default::default(),
        )
        .await;
    assert_eq!(r.text, "3");

    assert_eq!(
        find("book").schema()["properties"]["book"]["default"],
        serde_json::json!({"title": "Dune"})
    );
    assert_eq!(find("block").description(), "Adds numbers.\nSecond line.");
    let r = find("dx")
        .call(
            "c2",
            r#"{"other": {"x": 5}, "more": [{"x": 1}]}"#,
            Default::default(),
        )
        .await;
    assert_eq!(r.text, "6");
    assert_eq!(
        find("old").call("c3", "", Default::default()).await.text,
        "1"
    );
}

mod inner {
    /// A harness whose impl names the type by path.
    #[derive(Default)]
    pub struct PathTools;
}

#[tool_harness]
impl crate::inner::PathTools {
    /// Pings.
    #[ai_function]
    fn path_ping(&self) -> String {
        "pong".to_owned()
    }
}

#[test]
fn rust_type_uses_the_type_name() {
    let info = hpd_agent::harness::HarnessInfo::find("PathTools").unwrap();
    assert_eq!(info.rust_type(), "macro_rules_harness::PathTools");
}

/// Receivers and generics that are harmless.
#[derive(Default)]
pub struct Receivers;

#[tool_harness]
impl Receivers {
    /// A spelled-out receiver.
    #[ai_function]
    #[allow(clippy::needless_arbitrary_self_type)]
    fn spelled(self: &Self) -> u8 {
        1
    }

    /// A lifetime parameter and a where clause.
    #[ai_function]
    #[allow(clippy::needless_lifetimes)]
    fn with_lifetime<'a>(&'a self, n: u8) -> u8
    where
        Self: Sized,
    {
        n
    }
}

#[tokio::test]
async fn harmless_receivers_and_lifetimes_compile() {
    let functions = hpd_agent::harness::HarnessInfo::of::<Receivers>()
        .functions()
        .unwrap();
    assert_eq!(
        functions[0].call("c1", "", Default::default()).await.text,
        "1"
    );
    assert_eq!(
        functions[1]
            .call("c2", r#"{"n": 7}"#, Default::default())
            .await
            .text,
        "7"
    );
}
