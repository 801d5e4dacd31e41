impl MathTools {
    fn new() -> Self {
        MathTools
    }
    /// Adds two integers.
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    /// Waits, then answers.
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    async fn wait(&self, token: CancellationToken) {
        token.cancelled().await;
    }
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    fn tutor_agent(&self) -> SubAgent {
        SubAgent::new("tutor", "Explains the arithmetic.", AgentConfig::default())
    }
}
#[allow(
    unused_qualifications,
    unused_variables,
    dead_code,
    deprecated,
    non_camel_case_types,
    non_snake_case,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
const _: () = {
    use ::hpd_agent::__private as __hpd;
    use __hpd::{ViaConfig as _, ViaDefault as _};
    use __hpd::{ViaParts as _, ViaSchema as _, ViaText as _};
    #[ai_function(__hpd_resolve)]
    const _: () = ();
    #[sub_agent(__hpd_resolve)]
    const _: () = ();
    #[derive(
        ::hpd_agent::__private::serde::Deserialize,
        ::hpd_agent::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::hpd_agent::__private::serde")]
    #[schemars(crate = "::hpd_agent::__private::schemars")]
    struct __HpdArgs0 {
        a: i64,
        b: i64,
    }
    #[derive(
        ::hpd_agent::__private::serde::Deserialize,
        ::hpd_agent::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::hpd_agent::__private::serde")]
    #[schemars(crate = "::hpd_agent::__private::schemars")]
    struct __HpdArgs1 {}
    fn __hpd_schema0() -> __hpd::serde_json::Value {
        __hpd::parameters_schema::<__HpdArgs0>()
    }
    fn __hpd_schema1() -> __hpd::serde_json::Value {
        __hpd::parameters_schema::<__HpdArgs1>()
    }
    fn __hpd_output_schema0() -> __hpd::Option<__hpd::serde_json::Value> {
        let __hpd_probe = __hpd::OutputProbe::<i64>::new();
        (&&&__hpd_probe).__hpd_kind().output_schema(__hpd_probe)
    }
    fn __hpd_output_schema1() -> __hpd::Option<__hpd::serde_json::Value> {
        __hpd::None
    }
    fn __hpd_sub_agent2(__hpd_instance: &__hpd::HarnessObject) -> __hpd::SubAgent {
        let __hpd_this = __hpd_this::<MathTools>(__hpd_instance);
        <MathTools>::tutor_agent(&*__hpd_this)
    }
    fn __hpd_this<H: __hpd::ToolHarness>(
        __hpd_instance: &__hpd::HarnessObject,
    ) -> ::std::sync::Arc<H> {
        __hpd::downcast::<H>(__hpd_instance)
    }
    fn __hpd_this_ref<H: __hpd::ToolHarness>(
        __hpd_instance: &__hpd::HarnessObject,
    ) -> &H {
        __hpd::downcast_ref::<H>(__hpd_instance)
    }
    fn __hpd_invoke(
        __hpd_instance: &__hpd::HarnessObject,
        __hpd_index: usize,
        __hpd_arguments: &str,
        __hpd_call: &__hpd::CallParts<'_>,
    ) -> __hpd::Started {
        match __hpd_index {
            0usize => {
                let __HpdArgs0 { a, b } = match __hpd::parse_arguments::<
                    __HpdArgs0,
                >(__hpd_arguments) {
                    __hpd::Ok(__hpd_parsed) => __hpd_parsed,
                    __hpd::Err(__hpd_failure) => {
                        return __hpd::Started::Done(__hpd::Err(__hpd_failure));
                    }
                };
                let __hpd_this = __hpd_this_ref::<MathTools>(__hpd_instance);
                __hpd::Started::Done({
                    let __hpd_value = <MathTools>::add(&*__hpd_this, a, b);
                    (&&&__hpd::OutputProbe::of(&__hpd_value))
                        .__hpd_kind()
                        .output(__hpd_value)
                })
            }
            1usize => {
                let __HpdArgs1 {} = match __hpd::parse_arguments::<
                    __HpdArgs1,
                >(__hpd_arguments) {
                    __hpd::Ok(__hpd_parsed) => __hpd_parsed,
                    __hpd::Err(__hpd_failure) => {
                        return __hpd::Started::Done(__hpd::Err(__hpd_failure));
                    }
                };
                let __hpd_ctx = __hpd_call.context();
                let __hpd_instance = ::std::sync::Arc::clone(__hpd_instance);
                __hpd::Started::Running(
                    __hpd::Box::pin(async move {
                        let __hpd_this = __hpd_this::<MathTools>(&__hpd_instance);
                        {
                            let __hpd_value = <MathTools>::wait(
                                    &*__hpd_this,
                                    ::core::clone::Clone::clone(__hpd_ctx.cancellation_token()),
                                )
                                .await;
                            (&&&__hpd::OutputProbe::of(&__hpd_value))
                                .__hpd_kind()
                                .output(__hpd_value)
                        }
                    }),
                )
            }
            _ => {
                __hpd::Started::Done(
                    __hpd::Err(
                        __hpd::FunctionFailure::InvalidArguments(
                            __hpd::String::from("no such function"),
                        ),
                    ),
                )
            }
        }
    }
    fn __hpd_construct() -> __hpd::HarnessObject {
        fn __hpd_object<H: __hpd::ToolHarness>(
            __hpd_harness: H,
        ) -> __hpd::HarnessObject {
            __hpd::object(__hpd_harness)
        }
        __hpd_object(<MathTools>::new())
    }
    fn __hpd_middleware0() -> __hpd::ScopedMiddlewareSpec {
        (&__hpd::Probe::<AuditMiddleware>::new())
            .scoped_middleware_spec("AuditMiddleware")
    }
    fn __hpd_middleware1() -> __hpd::ScopedMiddlewareSpec {
        (&__hpd::Probe::<crate::limits::RateLimit>::new())
            .scoped_middleware_spec("RateLimit")
    }
    static __HPD_ENTRY: __hpd::HarnessEntry = __hpd::HarnessEntry {
        name: "Math",
        rust_type: ::core::concat!(
            ::core::module_path!(), "::", ::core::stringify!(MathTools)
        ),
        functions: &[
            __hpd::FunctionSpec {
                name: "add",
                description: "Adds two integers.",
                timeout_ms: __hpd::None,
                requires_approval: false,
                annotations: __hpd::ToolAnnotations::new(),
                schema: __hpd_schema0,
                output_schema: __hpd_output_schema0,
                sub_agent: __hpd::None,
            },
            __hpd::FunctionSpec {
                name: "wait",
                description: "Waits, then answers.",
                timeout_ms: __hpd::None,
                requires_approval: false,
                annotations: __hpd::ToolAnnotations::new(),
                schema: __hpd_schema1,
                output_schema: __hpd_output_schema1,
                sub_agent: __hpd::None,
            },
            __hpd::FunctionSpec {
                name: "tutor",
                description: "",
                timeout_ms: __hpd::None,
                requires_approval: false,
                annotations: __hpd::ToolAnnotations::new(),
                schema: __hpd::sub_agent_schema,
                output_schema: __hpd::no_output_schema,
                sub_agent: __hpd::Some(__hpd_sub_agent2),
            },
        ],
        collapse: __hpd::Some(__hpd::CollapseSpec {
            description: "Math operations",
            function_result: __hpd::Some("Math tools are active."),
            system_prompt: __hpd::Some("Use exact arithmetic."),
        }),
        constructor: __hpd::ConstructorSpec::Plain(__hpd_construct),
        metadata: __hpd::None,
        scoped_middlewares: &[__hpd_middleware0, __hpd_middleware1],
        invoke: __hpd_invoke,
        condition: __hpd::always,
        describe: __hpd::static_description,
        type_id: __hpd::type_id::<MathTools>,
    };
    static __HPD_INFO: __hpd::HarnessInfo = __hpd::HarnessInfo::new(&__HPD_ENTRY);
    impl __hpd::ToolHarness for MathTools {
        type Metadata = __hpd::Never;
        type Config = __hpd::Never;
        fn from_config(config: Self::Config) -> Self {
            match config {}
        }
        fn __harness_info(_: __hpd::Seal) -> &'static __hpd::HarnessInfo {
            &__HPD_INFO
        }
    }
    __hpd::inventory::submit! {
        __hpd::HarnessRegistration(& __HPD_INFO)
    }
};
