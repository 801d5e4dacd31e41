::core::compile_error! {
    "unknown `tool_harness` option `nmae`; expected one of `name`, `metadata`, `crate`"
}
::core::compile_error! {
    "unknown `ai_function` option `descripton`; expected one of `name`, `description`, `condition`, `timeout_ms`, `requires_approval`, `read_only`, `destructive`, `idempotent`, `open_world`"
}
::core::compile_error! {
    "`#[ai_function]` methods take `&self`, not `&mut self`: calls share the harness and may run concurrently; keep mutable state in a `Mutex`, `RwLock` or atomic field"
}
impl Tools {
    /// Counts.
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    fn count(&mut self, n: u32) -> u32 {
        n
    }
}
const _: () = {
    #[ai_function(__hpd_resolve)]
    const _: () = ();
    impl ::hpd_agent::__private::ToolHarness for Tools {
        type Metadata = ::hpd_agent::__private::Never;
        type Config = ::hpd_agent::__private::Never;
        fn from_config(config: Self::Config) -> Self {
            match config {}
        }
        fn __harness_info(
            _: ::hpd_agent::__private::Seal,
        ) -> &'static ::hpd_agent::__private::HarnessInfo {
            ::core::unreachable!("this harness did not compile")
        }
    }
};
