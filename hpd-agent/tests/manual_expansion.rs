//! A harness written out by hand exactly as `#[collapse]` expands it. It pins the contract
//! between the macros and `hpd_agent::__private`.

use hpd_agent::Registry;

#[derive(Default)]
/// A collapsed harness written out by hand.
pub struct HandMath;

impl HandMath {
    /// Adds two integers.
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Divides a by b.
    async fn divide(&self, a: f64, b: f64) -> Result<f64, String> {
        if b == 0.0 {
            Err("division by zero".into())
        } else {
            Ok(a / b)
        }
    }
}

const _: () = {
    use ::hpd_agent::__private as __hpd;

    #[derive(
        ::hpd_agent::__private::serde::Deserialize, ::hpd_agent::__private::schemars::JsonSchema,
    )]
    #[serde(crate = "::hpd_agent::__private::serde")]
    #[schemars(crate = "::hpd_agent::__private::schemars")]
    struct __HpdArgs0 {
        #[schemars(description = "The first addend.")]
        a: i64,
        b: i64,
    }

    #[derive(
        ::hpd_agent::__private::serde::Deserialize, ::hpd_agent::__private::schemars::JsonSchema,
    )]
    #[serde(crate = "::hpd_agent::__private::serde")]
    #[schemars(crate = "::hpd_agent::__private::schemars")]
    struct __HpdArgs1 {
        a: f64,
        b: f64,
    }

    fn __hpd_schema0() -> __hpd::serde_json::Value {
        __hpd::parameters_schema::<__HpdArgs0>()
    }
    fn __hpd_schema1() -> __hpd::serde_json::Value {
        __hpd::parameters_schema::<__HpdArgs1>()
    }

    fn __hpd_invoke(
        __hpd_instance: &__hpd::HarnessObject,
        __hpd_index: usize,
        __hpd_arguments: __hpd::serde_json::Value,
        __hpd_ctx: __hpd::FunctionContext,
    ) -> __hpd::Result<__hpd::BodyFuture, __hpd::ArgumentsError> {
        let _ = &__hpd_ctx;
        match __hpd_index {
            0usize => {
                let __HpdArgs0 { a, b } = __hpd::parse_arguments::<__HpdArgs0>(__hpd_arguments)?;
                let __hpd_this = __hpd::downcast::<HandMath>(__hpd_instance);
                __hpd::Ok(__hpd::Box::pin(async move {
                    __hpd::output_value(__hpd_this.add(a, b))
                }))
            }
            1usize => {
                let __HpdArgs1 { a, b } = __hpd::parse_arguments::<__HpdArgs1>(__hpd_arguments)?;
                let __hpd_this = __hpd::downcast::<HandMath>(__hpd_instance);
                __hpd::Ok(__hpd::Box::pin(async move {
                    __hpd::output_result(__hpd_this.divide(a, b).await)
                }))
            }
            _ => __hpd::Err(__hpd::ArgumentsError(__hpd::String::from(
                "no such function",
            ))),
        }
    }

    static __HPD_ENTRY: __hpd::HarnessEntry = __hpd::HarnessEntry {
        name: "HandMath",
        rust_type: ::core::concat!(::core::module_path!(), "::", "HandMath"),
        functions: &[
            __hpd::FunctionSpec {
                name: "add",
                description: "Adds two integers.",
                timeout_ms: __hpd::None,
                schema: __hpd_schema0,
            },
            __hpd::FunctionSpec {
                name: "divide",
                description: "Divides a by b.",
                timeout_ms: __hpd::Some(1000u64),
                schema: __hpd_schema1,
            },
        ],
        collapse: __hpd::Some(__hpd::CollapseSpec {
            description: "Math operations",
            function_result: __hpd::Some("Math tools are active."),
            system_prompt: __hpd::None,
        }),
        constructor: __hpd::ConstructorSpec::Plain(__hpd::construct_default::<HandMath>),
        metadata: __hpd::None,
        scoped_middlewares: &[],
        invoke: __hpd_invoke,
        condition: __hpd::always,
        describe: __hpd::static_description,
        type_id: __hpd::type_id::<HandMath>,
    };

    const _: () = __hpd::assert_harness_type::<HandMath>();

    impl __hpd::ToolHarness for HandMath {
        type Metadata = __hpd::Never;
        type Config = __hpd::Never;
        fn harness_entry() -> &'static __hpd::HarnessEntry {
            &__HPD_ENTRY
        }
        fn from_config(config: Self::Config) -> Self {
            match config {}
        }
    }

    __hpd::inventory::submit! { __hpd::HarnessRegistration(&__HPD_ENTRY) }
};

#[tokio::test]
async fn hand_written_expansion_works() {
    let registry = Registry::global();
    let info = registry.get("handmath").expect("registered");
    assert_eq!(
        info.entry().function_names().collect::<Vec<_>>(),
        ["add", "divide"]
    );
    let functions = registry.instantiate::<HandMath>().unwrap();
    let schema = functions[0].schema();
    assert_eq!(
        schema,
        &serde_json::json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "int64", "description": "The first addend."},
                "b": {"type": "integer", "format": "int64"}
            },
            "required": ["a", "b"]
        })
    );
    let r = functions[0]
        .call("c1", r#"{"a":2,"b":3}"#, Default::default())
        .await;
    assert_eq!((r.text.as_str(), r.is_error), ("5", false));
    let r = functions[1]
        .call("c2", r#"{"a":1,"b":0}"#, Default::default())
        .await;
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Error: division by zero", true)
    );
    let r = functions[1]
        .call("c3", r#"{"a":1}"#, Default::default())
        .await;
    assert!(
        r.is_error && r.text.starts_with("Invalid arguments for 'divide': "),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn hand_written_harness_runs_in_an_agent() {
    use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "HandMath", "")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c2", "add", r#"{"a":2,"b":3}"#),
            ToolCall::new("c3", "nope", "{}"),
        ]),
        ChatResponse::text("5"),
    ]);
    let agent = AgentBuilder::new()
        .with_instructions("Base.")
        .with_tool_harness::<HandMath>()
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    let out = agent.run("add").await.unwrap();
    assert_eq!(out.text, "5");
    let requests = client.requests();
    assert_eq!(requests[0].tool_names(), ["HandMath"]);
    assert_eq!(
        requests[0].tools[0].description,
        "Math operations (functions: add, divide)"
    );
    assert_eq!(requests[1].tool_names(), ["add", "divide"]);
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "HandMath expanded. Available functions: add, divide\n\nMath tools are active.",
            false
        ))
    );
    assert_eq!(requests[2].tool_result("c2"), Some(("5", false)));
    assert_eq!(
        requests[2].tool_result("c3"),
        Some((
            "Function 'nope' not found. Available functions: add, divide",
            true
        ))
    );
}
