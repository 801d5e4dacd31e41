#[tool_harness(metadata = SearchMetadata)]
impl SearchTools {
    pub fn new(config: SearchToolsConfig) -> Self {
        SearchTools { max_results: config.max_results }
    }

    #[ai_function(description = "Search the web with {metadata.default_provider} ({{beta}}).")]
    fn search(&self, query: String) -> String {
        format!("{} results for '{query}'", self.max_results)
    }

    /// Searches with Tavily.
    #[ai_function(condition = metadata.has_tavily_provider)]
    fn tavily_search(&self, #[serde(default)] query: String) -> String {
        format!("tavily: {query}")
    }
}
