impl SearchTools {
    #[allow(clippy::needless_pass_by_value)]
    pub fn new(config: SearchToolsConfig) -> Self {
        SearchTools {
            max_results: config.max_results,
        }
    }
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    fn search(&self, query: String) -> String {
        format!("{} results for '{query}'", self.max_results)
    }
    /// Searches with Tavily.
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    fn tavily_search(&self, query: String) -> String {
        format!("tavily: {query}")
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
        query: String,
    }
    #[derive(
        ::hpd_agent::__private::serde::Deserialize,
        ::hpd_agent::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::hpd_agent::__private::serde")]
    #[schemars(crate = "::hpd_agent::__private::schemars")]
    struct __HpdArgs1 {
        #[serde(default)]
        query: String,
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
                let __HpdArgs0 { query } = match __hpd::parse_arguments::<
                    __HpdArgs0,
                >(__hpd_arguments) {
                    __hpd::Ok(__hpd_parsed) => __hpd_parsed,
                    __hpd::Err(__hpd_failure) => {
                        return __hpd::Started::Done(__hpd::Err(__hpd_failure));
                    }
                };
                let __hpd_this = __hpd_this_ref::<SearchTools>(__hpd_instance);
                __hpd::Started::Done({
                    let __hpd_value = <SearchTools>::search(&*__hpd_this, query);
                    (&&&__hpd::OutputProbe::of(&__hpd_value))
                        .__hpd_kind()
                        .output(__hpd_value)
                })
            }
            1usize => {
                let __HpdArgs1 { query } = match __hpd::parse_arguments::<
                    __HpdArgs1,
                >(__hpd_arguments) {
                    __hpd::Ok(__hpd_parsed) => __hpd_parsed,
                    __hpd::Err(__hpd_failure) => {
                        return __hpd::Started::Done(__hpd::Err(__hpd_failure));
                    }
                };
                let __hpd_this = __hpd_this_ref::<SearchTools>(__hpd_instance);
                __hpd::Started::Done({
                    let __hpd_value = <SearchTools>::tavily_search(&*__hpd_this, query);
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
    fn __hpd_construct(
        __hpd_config: &__hpd::serde_json::Value,
    ) -> __hpd::Result<__hpd::HarnessObject, __hpd::HydrateError> {
        fn __hpd_with_config<
            H: __hpd::ToolHarness,
            C: __hpd::serde::de::DeserializeOwned,
        >(
            __hpd_config: &__hpd::serde_json::Value,
            __hpd_name: &'static str,
            __hpd_new: fn(C) -> H,
        ) -> __hpd::Result<__hpd::HarnessObject, __hpd::HydrateError> {
            __hpd::construct_with_config::<H, C>(__hpd_config, __hpd_name, __hpd_new)
        }
        __hpd_with_config::<
            SearchTools,
            SearchToolsConfig,
        >(__hpd_config, "SearchToolsConfig", <SearchTools>::new)
    }
    fn __hpd_parse_metadata(
        __hpd_value: &__hpd::serde_json::Value,
    ) -> __hpd::Result<
        ::std::sync::Arc<
            dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync,
        >,
        __hpd::HydrateError,
    > {
        __hpd::parse_metadata::<SearchMetadata>(__hpd_value, "SearchMetadata")
    }
    fn __hpd_condition(
        __hpd_metadata: __hpd::Option<
            &(dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync),
        >,
        __hpd_index: usize,
    ) -> bool {
        let __hpd::Some(metadata) = __hpd::metadata::<SearchMetadata>(__hpd_metadata)
        else {
            return true;
        };
        match __hpd_index {
            1usize => {
                let metadata = metadata;
                let __hpd_holds: bool = metadata.has_tavily_provider;
                __hpd_holds
            }
            _ => true,
        }
    }
    fn __hpd_describe(
        __hpd_metadata: __hpd::Option<
            &(dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync),
        >,
        __hpd_index: usize,
    ) -> __hpd::Option<__hpd::String> {
        let metadata = __hpd::metadata::<SearchMetadata>(__hpd_metadata)?;
        match __hpd_index {
            0usize => {
                __hpd::Some(
                    __hpd::format!(
                        "Search the web with {} ({{beta}}).", metadata.default_provider
                    ),
                )
            }
            _ => __hpd::None,
        }
    }
    static __HPD_ENTRY: __hpd::HarnessEntry = __hpd::HarnessEntry {
        name: "SearchTools",
        rust_type: ::core::concat!(
            ::core::module_path!(), "::", ::core::stringify!(SearchTools)
        ),
        functions: &[
            __hpd::FunctionSpec {
                name: "search",
                description: "Search the web with  ({beta}).",
                timeout_ms: __hpd::None,
                requires_approval: false,
                annotations: __hpd::ToolAnnotations::new(),
                schema: __hpd_schema0,
                output_schema: __hpd_output_schema0,
                sub_agent: __hpd::None,
            },
            __hpd::FunctionSpec {
                name: "tavily_search",
                description: "Searches with Tavily.",
                timeout_ms: __hpd::None,
                requires_approval: false,
                annotations: __hpd::ToolAnnotations::new(),
                schema: __hpd_schema1,
                output_schema: __hpd_output_schema1,
                sub_agent: __hpd::None,
            },
        ],
        collapse: __hpd::None,
        constructor: __hpd::ConstructorSpec::Config {
            type_name: "SearchToolsConfig",
            construct: __hpd_construct,
        },
        metadata: __hpd::Some(__hpd::MetadataSpec {
            type_name: "SearchMetadata",
            parse: __hpd_parse_metadata,
        }),
        scoped_middlewares: &[],
        invoke: __hpd_invoke,
        condition: __hpd_condition,
        describe: __hpd_describe,
        type_id: __hpd::type_id::<SearchTools>,
    };
    static __HPD_INFO: __hpd::HarnessInfo = __hpd::HarnessInfo::new(&__HPD_ENTRY);
    impl __hpd::ToolHarness for SearchTools {
        type Metadata = SearchMetadata;
        type Config = SearchToolsConfig;
        fn from_config(config: Self::Config) -> Self {
            <SearchTools>::new(config)
        }
        fn __harness_info(_: __hpd::Seal) -> &'static __hpd::HarnessInfo {
            &__HPD_INFO
        }
    }
    __hpd::inventory::submit! {
        __hpd::HarnessRegistration(& __HPD_INFO)
    }
};
