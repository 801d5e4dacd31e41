impl WeatherTools {
    /// Gets the current weather for a city.
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    fn get_weather(&self, city: String) -> String {
        format!("It is sunny in {city}.")
    }
    /// Gets a forecast for a city.
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    async fn get_forecast(
        &self,
        city: String,
        days: u32,
        ctx: &FunctionContext,
    ) -> Result<String, String> {
        Ok(format!("{days}-day forecast for {city} ({}).", ctx.call_id()))
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
    use __hpd::{ViaParts as _, ViaSchema as _, ViaText as _};
    #[ai_function(__hpd_resolve)]
    const _: () = ();
    #[derive(
        ::hpd_agent::__private::serde::Deserialize,
        ::hpd_agent::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::hpd_agent::__private::serde")]
    #[schemars(crate = "::hpd_agent::__private::schemars")]
    struct __HpdArgs0 {
        #[schemars(description = "The city to get weather for.")]
        city: String,
    }
    #[derive(
        ::hpd_agent::__private::serde::Deserialize,
        ::hpd_agent::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::hpd_agent::__private::serde")]
    #[schemars(crate = "::hpd_agent::__private::schemars")]
    struct __HpdArgs1 {
        city: String,
        days: u32,
    }
    fn __hpd_schema0() -> __hpd::serde_json::Value {
        __hpd::parameters_schema::<__HpdArgs0>()
    }
    fn __hpd_schema1() -> __hpd::serde_json::Value {
        __hpd::parameters_schema::<__HpdArgs1>()
    }
    fn __hpd_output_schema0() -> __hpd::Option<__hpd::serde_json::Value> {
        let __hpd_probe = __hpd::OutputProbe::<String>::new();
        (&&&__hpd_probe).__hpd_kind().output_schema(__hpd_probe)
    }
    fn __hpd_output_schema1() -> __hpd::Option<__hpd::serde_json::Value> {
        let __hpd_probe = __hpd::OutputProbe::<String>::new();
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
                let __HpdArgs0 { city } = match __hpd::parse_arguments::<
                    __HpdArgs0,
                >(__hpd_arguments) {
                    __hpd::Ok(__hpd_parsed) => __hpd_parsed,
                    __hpd::Err(__hpd_failure) => {
                        return __hpd::Started::Done(__hpd::Err(__hpd_failure));
                    }
                };
                let __hpd_this = __hpd_this_ref::<WeatherTools>(__hpd_instance);
                __hpd::Started::Done({
                    let __hpd_value = <WeatherTools>::get_weather(&*__hpd_this, city);
                    (&&&__hpd::OutputProbe::of(&__hpd_value))
                        .__hpd_kind()
                        .output(__hpd_value)
                })
            }
            1usize => {
                let __HpdArgs1 { city, days } = match __hpd::parse_arguments::<
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
                        let __hpd_this = __hpd_this::<WeatherTools>(&__hpd_instance);
                        match <WeatherTools>::get_forecast(
                                &*__hpd_this,
                                city,
                                days,
                                &__hpd_ctx,
                            )
                            .await
                        {
                            __hpd::Ok(__hpd_value) => {
                                (&&&__hpd::OutputProbe::of(&__hpd_value))
                                    .__hpd_kind()
                                    .output(__hpd_value)
                            }
                            __hpd::Err(__hpd_error) => {
                                __hpd::Err(__hpd::returned(__hpd_error))
                            }
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
    fn __hpd_construct<H: __hpd::ToolHarness + __hpd::DefaultConstructible>() -> __hpd::HarnessObject {
        __hpd::construct_default::<H>()
    }
    static __HPD_ENTRY: __hpd::HarnessEntry = __hpd::HarnessEntry {
        name: "WeatherTools",
        rust_type: ::core::concat!(
            ::core::module_path!(), "::", ::core::stringify!(WeatherTools)
        ),
        functions: &[
            __hpd::FunctionSpec {
                name: "get_weather",
                description: "Gets the current weather for a city.",
                timeout_ms: __hpd::None,
                requires_approval: false,
                annotations: __hpd::ToolAnnotations::new(),
                schema: __hpd_schema0,
                output_schema: __hpd_output_schema0,
                sub_agent: __hpd::None,
            },
            __hpd::FunctionSpec {
                name: "get_forecast",
                description: "Gets a forecast for a city.",
                timeout_ms: __hpd::Some(5000u64),
                requires_approval: false,
                annotations: __hpd::ToolAnnotations::new()
                    .with_read_only(true)
                    .with_open_world(false),
                schema: __hpd_schema1,
                output_schema: __hpd_output_schema1,
                sub_agent: __hpd::None,
            },
        ],
        collapse: __hpd::None,
        constructor: __hpd::ConstructorSpec::Plain(__hpd_construct::<WeatherTools>),
        metadata: __hpd::None,
        scoped_middlewares: &[],
        invoke: __hpd_invoke,
        condition: __hpd::always,
        describe: __hpd::static_description,
        type_id: __hpd::type_id::<WeatherTools>,
    };
    static __HPD_INFO: __hpd::HarnessInfo = __hpd::HarnessInfo::new(&__HPD_ENTRY);
    impl __hpd::ToolHarness for WeatherTools {
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
