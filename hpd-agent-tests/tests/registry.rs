//! Behaviour of the macros through the runtime: what the registry holds for each fixture
//! harness (names, members, collapse data, descriptions, schemas, constructors, metadata,
//! scoped middleware), and what calling the generated functions does.

use std::time::Duration;

use harness_library as _;
use hpd_agent::prelude::*;
// The macro contract, reached the way generated code reaches it: these tests check what the
// macros emit.
use hpd_agent::__private as contract;
use hpd_agent::harness::HarnessInfo;
use hpd_agent::tool::Function;
use hpd_agent_tests::{
    DatabaseTools, FileMetadata, MathTools, SearchMetadata, SearchTools, SearchToolsConfig,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

fn info(name: &str) -> &'static HarnessInfo {
    HarnessInfo::find(name).unwrap_or_else(|error| panic!("{error}"))
}

fn names(functions: &[Function]) -> Vec<&str> {
    functions.iter().map(Function::name).collect()
}

fn function(functions: &[Function], name: &str) -> Function {
    functions
        .iter()
        .find(|f| f.name() == name)
        .unwrap_or_else(|| panic!("no function {name}"))
        .clone()
}

async fn call(function: &Function, arguments: &str) -> (String, bool) {
    let result = function
        .call("c1", arguments, CancellationToken::new())
        .await;
    (result.text, result.is_error)
}

// The fixture logs are process-wide; tests that read them take this lock.
static LOGS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[test]
fn registry_holds_every_fixture_harness() {
    let names: Vec<&str> = HarnessInfo::linked().map(HarnessInfo::name).collect();
    for expected in [
        "DatabaseTools",
        "FaultTools",
        "FileTools",
        "MathTools",
        "SearchTools",
        "WeatherTools",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert_eq!(info("MathTools").rust_type(), "hpd_agent_tests::MathTools");
    assert!(std::ptr::eq(
        info("MathTools"),
        HarnessInfo::of::<MathTools>()
    ));
    assert_eq!(info("weathertools").name(), "WeatherTools");
}

#[test]
fn members_are_in_declaration_order() {
    let members = |name: &str| info(name).function_names().collect::<Vec<_>>();
    assert_eq!(members("MathTools"), ["add", "multiply", "divide"]);
    assert_eq!(members("WeatherTools"), ["get_weather", "get_forecast"]);
    assert_eq!(members("SearchTools"), ["search", "tavily_search"]);
    assert_eq!(members("DatabaseTools"), ["query"]);
    assert_eq!(members("FileTools"), ["read_file", "write_file"]);
    assert_eq!(members("FaultTools"), ["explode", "echo", "ping"]);
}

#[test]
fn collapse_data() {
    let math = contract::entry(info("MathTools"))
        .collapse
        .expect("collapsed");
    assert_eq!(math.description, "Math operations");
    assert_eq!(math.function_result, Some("Math tools are active."));
    assert_eq!(
        math.system_prompt,
        Some("Use exact arithmetic and show units when relevant.")
    );
    let files = contract::entry(info("FileTools"))
        .collapse
        .expect("collapsed");
    assert_eq!(files.description, "File operations");
    assert_eq!(files.function_result, None);
    assert_eq!(
        files.system_prompt,
        Some("Paths are relative to the workspace.")
    );
    let db = contract::entry(info("DatabaseTools"))
        .collapse
        .expect("collapsed");
    assert_eq!((db.function_result, db.system_prompt), (None, None));
    for plain in ["WeatherTools", "SearchTools", "FaultTools"] {
        assert!(!info(plain).is_collapsed(), "{plain}");
    }
}

#[test]
fn get_weather_definition_is_exact() {
    let functions = HarnessInfo::of::<hpd_agent_tests::WeatherTools>()
        .functions()
        .unwrap();
    let weather = function(&functions, "get_weather");
    assert_eq!(
        weather.description(),
        "Gets the current weather for a city."
    );
    assert_eq!(
        weather.schema(),
        &json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city to get weather for."}
            },
            "required": ["city"]
        })
    );
    let forecast = function(&functions, "get_forecast");
    assert_eq!(
        forecast.schema(),
        &json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "format": "uint32", "minimum": 0}
            },
            "required": ["city", "days"]
        })
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Default)]
struct SchemaTools;

#[tool_harness]
impl SchemaTools {
    #[ai_function]
    fn convert(
        &self,
        #[ai_description("The target unit.")] unit: Unit,
        precision: Option<u8>,
        at: Point,
    ) -> String {
        format!("{unit:?} {precision:?} {} {}", at.x, at.y)
    }

    /// Reads a field.
    ///
    /// The field is named `type`, a keyword.
    #[ai_function]
    fn r#type(&self, #[serde(rename = "kind")] r#type: String) -> String {
        r#type
    }

    #[ai_function(description = "Literal {{braces}} stay.")]
    fn braces(&self) {}
}

#[test]
fn schemas_inline_enums_and_leave_options_optional() {
    let functions = HarnessInfo::of::<SchemaTools>().functions().unwrap();
    let schema = function(&functions, "convert").schema().clone();
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The target unit."},
                "precision": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255},
                "at": {
                    "type": "object",
                    "properties": {
                        "x": {"type": "integer", "format": "int32"},
                        "y": {"type": "integer", "format": "int32"}
                    },
                    "required": ["x", "y"]
                }
            },
            "required": ["unit", "at"]
        })
    );
    let text = schema.to_string();
    for absent in ["title", "$schema", "$defs", "$ref"] {
        assert!(!text.contains(absent), "{absent} in {text}");
    }
}

#[tokio::test]
async fn names_and_descriptions_follow_the_defaults() {
    let functions = HarnessInfo::of::<SchemaTools>().functions().unwrap();
    assert_eq!(names(&functions), ["convert", "type", "braces"]);
    let convert = function(&functions, "convert");
    assert_eq!(convert.description(), "");
    let keyword = function(&functions, "type");
    assert_eq!(
        keyword.description(),
        "Reads a field.\n\nThe field is named `type`, a keyword."
    );
    assert_eq!(
        keyword.schema()["properties"],
        json!({"kind": {"type": "string"}})
    );
    assert_eq!(
        call(&keyword, r#"{"kind":"k"}"#).await,
        ("k".to_owned(), false)
    );
    let braces = function(&functions, "braces");
    assert_eq!(braces.description(), "Literal {braces} stay.");
    assert_eq!(call(&braces, "").await, (String::new(), false));
}

#[tokio::test]
async fn search_tools_config_constructor() {
    let search = info("SearchTools");
    assert!(contract::entry(search).takes_config());
    let run = |config: Option<Value>| async move {
        let instance = contract::construct(search, config.as_ref()).unwrap();
        let functions = contract::functions(search, &instance, None);
        call(&function(&functions, "search"), r#"{"query":"rust"}"#).await
    };
    let _logs = LOGS.lock().await;
    assert_eq!(run(None).await.0, "5 results for 'rust'");
    assert_eq!(run(Some(json!({}))).await.0, "5 results for 'rust'");
    assert_eq!(
        run(Some(json!({"MaxResults": 3}))).await.0,
        "3 results for 'rust'"
    );
    let error = contract::construct(search, Some(&json!({"MaxResults": "many"})))
        .unwrap_err()
        .to_string();
    for part in ["SearchTools", "SearchToolsConfig", "MaxResults"] {
        assert!(error.contains(part), "{part} not in {error}");
    }
    let built = <SearchTools as ToolHarness>::from_config(SearchToolsConfig { max_results: 7 });
    let functions = contract::functions(search, &hpd_agent::__private::object(built), None);
    assert_eq!(
        call(&function(&functions, "search"), r#"{"query":"x"}"#)
            .await
            .0,
        "7 results for 'x'"
    );
}

#[derive(Debug)]
struct Counter {
    start: u32,
}

#[tool_harness(name = "counter-tools")]
impl Counter {
    fn new() -> Self {
        Counter { start: 41 }
    }

    /// Counts.
    #[ai_function]
    fn next(&self) -> u32 {
        self.start + 1
    }
}

#[tokio::test]
async fn plain_and_default_constructors() {
    let counter = info("counter-tools");
    assert!(!contract::entry(counter).takes_config());
    assert!(contract::construct(counter, Some(&json!({}))).is_err());
    let functions = HarnessInfo::of::<Counter>().functions().unwrap();
    assert_eq!(call(&functions[0], "{}").await, ("42".to_owned(), false));
    let math = HarnessInfo::of::<MathTools>().functions().unwrap();
    assert_eq!(names(&math), ["add", "multiply", "divide"]);
}

fn search_metadata(tavily: bool) -> SearchMetadata {
    SearchMetadata {
        default_provider: "brave".to_owned(),
        has_tavily_provider: tavily,
    }
}

#[test]
fn conditions_and_templates_with_metadata() {
    let search = info("SearchTools");
    let instance = contract::construct(search, None).unwrap();

    let without = contract::functions(search, &instance, Some(&search_metadata(false)));
    assert_eq!(names(&without), ["search"]);
    assert_eq!(without[0].description(), "Search the web with brave.");

    let with = contract::functions(search, &instance, Some(&search_metadata(true)));
    assert_eq!(names(&with), ["search", "tavily_search"]);
    assert_eq!(with[1].description(), "Searches with Tavily.");

    // From JSON, through the generated metadata parser.
    let spec = contract::entry(search).metadata.expect("metadata");
    assert_eq!(spec.type_name, "SearchMetadata");
    let parsed =
        (spec.parse)(&json!({"DefaultProvider": "tavily", "HasTavilyProvider": true})).unwrap();
    let from_json = contract::functions(search, &instance, Some(&*parsed));
    assert_eq!(names(&from_json), ["search", "tavily_search"]);
    assert_eq!(from_json[0].description(), "Search the web with tavily.");
    let error = (spec.parse)(&json!({"DefaultProvider": 1}))
        .expect_err("bad metadata")
        .to_string();
    assert!(error.contains("SearchMetadata"), "{error}");

    let files = info("FileTools");
    let instance = contract::construct(files, None).unwrap();
    let read_only = contract::functions(
        files,
        &instance,
        Some(&FileMetadata {
            allow_writes: false,
        }),
    );
    assert_eq!(names(&read_only), ["read_file"]);
    let writable =
        contract::functions(files, &instance, Some(&FileMetadata { allow_writes: true }));
    assert_eq!(names(&writable), ["read_file", "write_file"]);
}

#[test]
fn conditions_and_templates_without_metadata() {
    let search = info("SearchTools");
    let functions = contract::functions(search, &contract::construct(search, None).unwrap(), None);
    assert_eq!(names(&functions), ["search", "tavily_search"]);
    assert_eq!(functions[0].description(), "Search the web with .");
    assert_eq!(
        contract::entry(search).functions[0].description,
        "Search the web with ."
    );
    assert!(contract::entry(info("WeatherTools")).metadata.is_none());
}

#[test]
fn scoped_middleware_from_the_attribute() {
    let specs: Vec<_> = contract::entry(info("DatabaseTools"))
        .scoped_middleware_specs()
        .collect();
    assert_eq!(specs.len(), 1);
    assert_eq!(specs[0].name, "DbAuditMiddleware");
    assert_eq!(specs[0].config_type, Some("DbAuditMiddlewareConfig"));
    assert!((specs[0].validate)(&json!({"AuditLevel": "Detailed"})).is_ok());
    let error = (specs[0].validate)(&json!({"AuditLevel": 3})).unwrap_err();
    assert!(error.to_string().contains("AuditLevel"), "{error}");
    assert!((specs[0].create)(&json!({})).is_ok());
    assert!(
        contract::entry(info("MathTools"))
            .scoped_middlewares
            .is_empty()
    );
    let _ = DatabaseTools;
}

#[derive(Default)]
struct DefaultOnly;

impl hpd_agent::Middleware for DefaultOnly {}

#[derive(Default)]
struct Guarded;

#[collapse("Guarded", middlewares = [DefaultOnly, hpd_agent_tests::DbAuditMiddleware])]
impl Guarded {
    /// Does nothing.
    #[ai_function]
    fn nothing(&self) {}
}

#[test]
fn scoped_middleware_with_default_and_by_path() {
    let specs: Vec<_> = contract::entry(info("Guarded"))
        .scoped_middleware_specs()
        .collect();
    let names: Vec<_> = specs.iter().map(|s| (s.name, s.config_type)).collect();
    assert_eq!(
        names,
        [
            ("DefaultOnly", None),
            ("DbAuditMiddleware", Some("DbAuditMiddlewareConfig"))
        ]
    );
    assert!((specs[0].create)(&json!({})).is_ok());
}

#[derive(Default)]
struct Behaviour;

#[tool_harness]
impl Behaviour {
    /// Sync.
    #[ai_function]
    fn sync_value(&self, n: u8) -> Vec<u8> {
        vec![n; 2]
    }

    /// Async.
    #[ai_function]
    async fn async_value(&self, text: String) -> String {
        tokio::task::yield_now().await;
        text.to_uppercase()
    }

    /// Fails.
    #[ai_function]
    async fn fails(&self) -> std::result::Result<u8, std::io::Error> {
        Err(std::io::Error::other("disk on fire"))
    }

    /// Panics.
    #[ai_function]
    async fn panics(&self) -> String {
        panic!("private detail")
    }

    /// Sleeps.
    #[ai_function(timeout_ms = 20)]
    async fn sleeps(&self) -> String {
        tokio::time::sleep(Duration::from_secs(5)).await;
        "late".to_owned()
    }

    /// Sees its call.
    #[ai_function(name = "context")]
    async fn with_context(
        &self,
        ctx: &FunctionContext,
        label: String,
        token: CancellationToken,
    ) -> String {
        format!(
            "{label}:{}:{}:{}:{}",
            ctx.function_name(),
            ctx.harness_name(),
            ctx.call_id(),
            token.is_cancelled()
        )
    }

    /// Unit.
    #[ai_function]
    fn unit(&self) {}

    /// Option.
    #[ai_function]
    fn maybe(&self, n: Option<u8>) -> Option<u8> {
        n
    }
}

#[tokio::test]
async fn calling_generated_functions() {
    let functions = HarnessInfo::of::<Behaviour>().functions().unwrap();
    let f = |name| function(&functions, name);
    assert_eq!(
        call(&f("sync_value"), r#"{"n":3}"#).await,
        ("[3,3]".to_owned(), false)
    );
    assert_eq!(
        call(&f("async_value"), r#"{"text":"hi"}"#).await,
        ("HI".to_owned(), false)
    );
    assert_eq!(
        call(&f("fails"), "{}").await,
        ("Error: disk on fire".to_owned(), true)
    );
    let (text, error) = call(&f("panics"), "{}").await;
    assert_eq!(
        (text.as_str(), error),
        ("Error: function 'panics' panicked", true)
    );
    assert_eq!(f("sleeps").timeout(), Some(Duration::from_millis(20)));
    assert_eq!(
        call(&f("sleeps"), "{}").await,
        (
            "Error: function 'sleeps' timed out after 20 ms".to_owned(),
            true
        )
    );
    let (text, error) = call(&f("sync_value"), r#"{"n":"three"}"#).await;
    assert!(
        error && text.starts_with("Invalid arguments for 'sync_value': "),
        "{text}"
    );
    assert!(text.contains('n'), "{text}");
    let (text, error) = call(&f("sync_value"), "{}").await;
    assert!(error && text.contains("missing field `n`"), "{text}");
    assert_eq!(call(&f("unit"), "null").await, (String::new(), false));
    assert_eq!(call(&f("maybe"), "{}").await, (String::new(), false));
    assert_eq!(
        call(&f("maybe"), r#"{"n":4}"#).await,
        ("4".to_owned(), false)
    );
}

#[tokio::test]
async fn runtime_parameters_are_hidden_from_the_schema() {
    let functions = HarnessInfo::of::<Behaviour>().functions().unwrap();
    let context = function(&functions, "context");
    assert_eq!(
        context.schema(),
        &json!({
            "type": "object",
            "properties": {"label": {"type": "string"}},
            "required": ["label"]
        })
    );
    let result = context
        .call("call-7", r#"{"label":"L"}"#, CancellationToken::new())
        .await;
    assert_eq!(result.text, "L:context:Behaviour:call-7:false");
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let result = context.call("c", r#"{"label":"L"}"#, cancelled).await;
    assert_eq!(result.text, "L:context:Behaviour:c:true");
}

#[tokio::test]
async fn fixtures_write_the_execution_log() {
    let _logs = LOGS.lock().await;
    hpd_agent_tests::reset_logs();
    let math = HarnessInfo::of::<MathTools>().functions().unwrap();
    assert_eq!(
        call(&math[0], r#"{"a":2,"b":3}"#).await,
        ("5".to_owned(), false)
    );
    assert_eq!(
        call(&math[2], r#"{"a":1,"b":0}"#).await,
        ("Error: division by zero".to_owned(), true)
    );
    let faults = HarnessInfo::of::<hpd_agent_tests::FaultTools>()
        .functions()
        .unwrap();
    let (text, error) = call(&faults[0], "").await;
    assert!(error && !text.contains("secret"), "{text}");
    assert_eq!(
        hpd_agent_tests::take_executions(),
        ["MathTools.add", "MathTools.divide", "FaultTools.explode"]
    );
    assert!(hpd_agent_tests::executions().is_empty());
}

#[test]
fn harness_from_a_library_crate_is_found_by_name() {
    let converter = info("UnitConverter");
    assert_eq!(
        contract::entry(converter).rust_type,
        "harness_library::UnitConverter"
    );
    assert_eq!(
        contract::entry(converter)
            .function_names()
            .collect::<Vec<_>>(),
        ["celsius_to_fahrenheit", "kilometres_to_miles"]
    );
}

#[tokio::test]
async fn fixture_middleware_numbers_instances_and_logs_hooks() {
    use hpd_agent::{Middleware, middleware::IterationInfo, middleware::TurnInfo};

    let _logs = LOGS.lock().await;
    hpd_agent_tests::reset_logs();
    let spec = contract::entry(info("DatabaseTools"))
        .scoped_middleware_specs()
        .next()
        .expect("DbAuditMiddleware");
    let first = (spec.create)(&json!({})).unwrap();
    let second = (spec.create)(&json!({"AuditLevel": "Detailed"})).unwrap();
    let turn = TurnInfo::new("", "hi");
    first.before_message_turn(&turn).await.unwrap();
    second.before_message_turn(&turn).await.unwrap();
    let iteration = IterationInfo::new(1, Vec::new());
    let global = hpd_agent_tests::RecordingMiddleware::new("G").blocking(["echo"]);
    global.before_iteration(&iteration).await.unwrap();
    global.after_iteration(&iteration).await.unwrap();
    assert_eq!(
        hpd_agent_tests::take_middleware_log(),
        [
            "DbAudit#1[Basic]:before_message_turn",
            "DbAudit#2[Detailed]:before_message_turn",
            "G:before_iteration",
            "G:after_iteration",
        ]
    );
    hpd_agent_tests::reset_logs();
    let third = (spec.create)(&json!({})).unwrap();
    third.before_iteration(&iteration).await.unwrap();
    assert_eq!(
        hpd_agent_tests::middleware_log(),
        ["DbAudit#1[Basic]:before_iteration"]
    );
}
