#!/usr/bin/env python3
"""Generates the compile-time comparison: one crate with 100 harnesses x 10 functions behind
hpd-agent's macros, and one with the same methods behind rmcp's `#[tool_router]`, in a
workspace of their own under bench/compile_time/generated (not part of the main workspace).

    python3 bench/compile_time/gen.py && bash bench/compile_time/run.sh
"""
import os

HARNESSES, FUNCTIONS = 100, 10
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "generated")


def write(path, text):
    path = os.path.join(root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


write("Cargo.toml", """[workspace]
resolver = "3"
members = ["hpd-tools", "rmcp-tools"]
""")

write("hpd-tools/Cargo.toml", """[package]
name = "hpd-tools"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
hpd-agent = { path = "../../../../hpd-agent", default-features = false }
""")

write("rmcp-tools/Cargo.toml", """[package]
name = "rmcp-tools"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
rmcp = { version = "3.11", default-features = false, features = ["server", "macros"] }
serde = { version = "1", features = ["derive"] }
schemars = "1"
""")

hpd = ["//! 100 harnesses x 10 functions behind hpd-agent's macros.", "",
       "use hpd_agent::prelude::*;", ""]
rmcp = ["//! The same methods behind rmcp's macros.", "",
        "use rmcp::handler::server::wrapper::Parameters;", "use rmcp::{tool, tool_router};", ""]
for h in range(HARNESSES):
    hpd += [f"/// Harness {h}.", "#[derive(Debug, Default)]", f"pub struct Harness{h};", "",
            f"#[collapse(\"Tools of harness {h}\")]", f"impl Harness{h} {{"]
    rmcp += [f"/// Harness {h}.", "#[derive(Debug, Clone, Default)]", f"pub struct Harness{h};", ""]
    for f in range(FUNCTIONS):
        rmcp += ["#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]",
                 f"pub struct H{h}F{f}Args {{", "    /// The first operand.", "    pub a: i64,",
                 "    /// The second operand.", "    pub b: i64,", "}", ""]
    rmcp += ["#[tool_router(server_handler)]", f"impl Harness{h} {{"]
    for f in range(FUNCTIONS):
        hpd += [f"    /// Adds a, b and {f} (harness {h}).", "    #[ai_function]",
                f"    fn h{h}_f{f}(",
                "        &self,",
                "        #[ai_description(\"The first operand.\")] a: i64,",
                "        #[ai_description(\"The second operand.\")] b: i64,",
                "    ) -> i64 {", f"        a + b + {f}", "    }", ""]
        rmcp += [f"    #[tool(description = \"Adds a, b and {f} (harness {h}).\")]",
                 f"    fn h{h}_f{f}(&self, Parameters(H{h}F{f}Args {{ a, b }}): Parameters<H{h}F{f}Args>) -> String {{",
                 f"        (a + b + {f}).to_string()", "    }", ""]
    hpd[-1:] = []
    rmcp[-1:] = []
    hpd += ["}", ""]
    rmcp += ["}", ""]
write("hpd-tools/src/lib.rs", "\n".join(hpd))
write("rmcp-tools/src/lib.rs", "\n".join(rmcp))
print(f"wrote {root}")
