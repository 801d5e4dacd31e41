use hpd_agent::ai_function;

struct Tools;

impl Tools {
    #[ai_function]
    fn ping(&self, #[ai_description("Ignored.")] text: String) -> String {
        text
    }
}

fn main() {
    let _ = Tools.ping(String::new());
}
