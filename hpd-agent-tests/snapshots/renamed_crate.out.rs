impl Clock {
    /// The current hour.
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    fn hour(&self, offset: u8) -> u8 {
        (12 + offset) % 24
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
    use agents::__private as __hpd;
    use __hpd::{ViaParts as _, ViaSchema as _, ViaText as _};
    #[ai_function(__hpd_resolve)]
    const _: () = ();
    #[derive(
        agents::__private::serde::Deserialize,
        agents::__private::schemars::JsonSchema
    )]
    #[serde(crate = "agents::__private::serde")]
    #[schemars(crate = "agents::__private::schemars")]
    struct __HpdArgs0 {
        #[schemars(description = "Hours to add.")]
        offset: u8,
    }
    fn __hpd_schema0() -> __hpd::serde_json::Value {
        __hpd::parameters_schema::<__HpdArgs0>()
    }
    fn __hpd_output_schema0() -> __hpd::Option<__hpd::serde_json::Value> {
        let __hpd_probe = __hpd::OutputProbe::<u8>::new();
        (&&&__hpd_probe).__hpd_kind().output_schema(__hpd_probe)
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
                let __HpdArgs0 { offset } = match __hpd::parse_arguments::<
                    __HpdArgs0,
                >(__hpd_arguments) {
                    __hpd::Ok(__hpd_parsed) => __hpd_parsed,
                    __hpd::Err(__hpd_failure) => {
                        return __hpd::Started::Done(__hpd::Err(__hpd_failure));
                    }
                };
                let __hpd_this = __hpd_this_ref::<Clock>(__hpd_instance);
                __hpd::Started::Done({
                    let __hpd_value = <Clock>::hour(&*__hpd_this, offset);
                    (&&&__hpd::OutputProbe::of(&__hpd_value))
                        .__hpd_kind()
                        .output(__hpd_value)
                })
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
    fn __hpd_construct<H: __hpd::ToolHarness + __hpd::DefaultConstructible>() -> __hpd::HarnessObject {
        __hpd::construct_default::<H>()
    }
    static __HPD_ENTRY: __hpd::HarnessEntry = __hpd::HarnessEntry {
        name: "Clock",
        rust_type: ::core::concat!(
            ::core::module_path!(), "::", ::core::stringify!(Clock)
        ),
        functions: &[
            __hpd::FunctionSpec {
                name: "hour",
                description: "The current hour.",
                timeout_ms: __hpd::None,
                requires_approval: false,
                annotations: __hpd::ToolAnnotations::new(),
                schema: __hpd_schema0,
                output_schema: __hpd_output_schema0,
                sub_agent: __hpd::None,
            },
        ],
        collapse: __hpd::Some(__hpd::CollapseSpec {
            description: "Clock operations",
            function_result: __hpd::None,
            system_prompt: __hpd::None,
        }),
        constructor: __hpd::ConstructorSpec::Plain(__hpd_construct::<Clock>),
        metadata: __hpd::None,
        scoped_middlewares: &[],
        invoke: __hpd_invoke,
        condition: __hpd::always,
        describe: __hpd::static_description,
        type_id: __hpd::type_id::<Clock>,
    };
    static __HPD_INFO: __hpd::HarnessInfo = __hpd::HarnessInfo::new(&__HPD_ENTRY);
    impl __hpd::ToolHarness for Clock {
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
