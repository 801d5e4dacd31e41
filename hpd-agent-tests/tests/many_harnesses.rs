//! 200 collapsed harnesses of 10 functions each: the first request carries 200 container
//! definitions and no member definitions; expanding one container adds exactly its 10 members.
//!
//! The harnesses are generated with `macro_rules!` below (the invocation list spells out the
//! function names because tool names must be unique across an agent).

use hpd_agent::prelude::*;
use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};

macro_rules! harness {
    ($name:ident: $f0:ident, $f1:ident, $f2:ident, $f3:ident, $f4:ident, $f5:ident, $f6:ident, $f7:ident, $f8:ident, $f9:ident) => {
        #[derive(Default)]
        struct $name;

        #[collapse("A generated harness")]
        impl $name {
            /// Echoes its input.
            #[ai_function]
            fn $f0(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f1(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f2(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f3(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f4(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f5(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f6(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f7(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f8(&self, x: i64) -> i64 {
                x
            }
            /// Echoes its input.
            #[ai_function]
            fn $f9(&self, x: i64) -> i64 {
                x
            }
        }
    };
}

harness!(Generated000: h000_f0, h000_f1, h000_f2, h000_f3, h000_f4, h000_f5, h000_f6, h000_f7, h000_f8, h000_f9);
harness!(Generated001: h001_f0, h001_f1, h001_f2, h001_f3, h001_f4, h001_f5, h001_f6, h001_f7, h001_f8, h001_f9);
harness!(Generated002: h002_f0, h002_f1, h002_f2, h002_f3, h002_f4, h002_f5, h002_f6, h002_f7, h002_f8, h002_f9);
harness!(Generated003: h003_f0, h003_f1, h003_f2, h003_f3, h003_f4, h003_f5, h003_f6, h003_f7, h003_f8, h003_f9);
harness!(Generated004: h004_f0, h004_f1, h004_f2, h004_f3, h004_f4, h004_f5, h004_f6, h004_f7, h004_f8, h004_f9);
harness!(Generated005: h005_f0, h005_f1, h005_f2, h005_f3, h005_f4, h005_f5, h005_f6, h005_f7, h005_f8, h005_f9);
harness!(Generated006: h006_f0, h006_f1, h006_f2, h006_f3, h006_f4, h006_f5, h006_f6, h006_f7, h006_f8, h006_f9);
harness!(Generated007: h007_f0, h007_f1, h007_f2, h007_f3, h007_f4, h007_f5, h007_f6, h007_f7, h007_f8, h007_f9);
harness!(Generated008: h008_f0, h008_f1, h008_f2, h008_f3, h008_f4, h008_f5, h008_f6, h008_f7, h008_f8, h008_f9);
harness!(Generated009: h009_f0, h009_f1, h009_f2, h009_f3, h009_f4, h009_f5, h009_f6, h009_f7, h009_f8, h009_f9);
harness!(Generated010: h010_f0, h010_f1, h010_f2, h010_f3, h010_f4, h010_f5, h010_f6, h010_f7, h010_f8, h010_f9);
harness!(Generated011: h011_f0, h011_f1, h011_f2, h011_f3, h011_f4, h011_f5, h011_f6, h011_f7, h011_f8, h011_f9);
harness!(Generated012: h012_f0, h012_f1, h012_f2, h012_f3, h012_f4, h012_f5, h012_f6, h012_f7, h012_f8, h012_f9);
harness!(Generated013: h013_f0, h013_f1, h013_f2, h013_f3, h013_f4, h013_f5, h013_f6, h013_f7, h013_f8, h013_f9);
harness!(Generated014: h014_f0, h014_f1, h014_f2, h014_f3, h014_f4, h014_f5, h014_f6, h014_f7, h014_f8, h014_f9);
harness!(Generated015: h015_f0, h015_f1, h015_f2, h015_f3, h015_f4, h015_f5, h015_f6, h015_f7, h015_f8, h015_f9);
harness!(Generated016: h016_f0, h016_f1, h016_f2, h016_f3, h016_f4, h016_f5, h016_f6, h016_f7, h016_f8, h016_f9);
harness!(Generated017: h017_f0, h017_f1, h017_f2, h017_f3, h017_f4, h017_f5, h017_f6, h017_f7, h017_f8, h017_f9);
harness!(Generated018: h018_f0, h018_f1, h018_f2, h018_f3, h018_f4, h018_f5, h018_f6, h018_f7, h018_f8, h018_f9);
harness!(Generated019: h019_f0, h019_f1, h019_f2, h019_f3, h019_f4, h019_f5, h019_f6, h019_f7, h019_f8, h019_f9);
harness!(Generated020: h020_f0, h020_f1, h020_f2, h020_f3, h020_f4, h020_f5, h020_f6, h020_f7, h020_f8, h020_f9);
harness!(Generated021: h021_f0, h021_f1, h021_f2, h021_f3, h021_f4, h021_f5, h021_f6, h021_f7, h021_f8, h021_f9);
harness!(Generated022: h022_f0, h022_f1, h022_f2, h022_f3, h022_f4, h022_f5, h022_f6, h022_f7, h022_f8, h022_f9);
harness!(Generated023: h023_f0, h023_f1, h023_f2, h023_f3, h023_f4, h023_f5, h023_f6, h023_f7, h023_f8, h023_f9);
harness!(Generated024: h024_f0, h024_f1, h024_f2, h024_f3, h024_f4, h024_f5, h024_f6, h024_f7, h024_f8, h024_f9);
harness!(Generated025: h025_f0, h025_f1, h025_f2, h025_f3, h025_f4, h025_f5, h025_f6, h025_f7, h025_f8, h025_f9);
harness!(Generated026: h026_f0, h026_f1, h026_f2, h026_f3, h026_f4, h026_f5, h026_f6, h026_f7, h026_f8, h026_f9);
harness!(Generated027: h027_f0, h027_f1, h027_f2, h027_f3, h027_f4, h027_f5, h027_f6, h027_f7, h027_f8, h027_f9);
harness!(Generated028: h028_f0, h028_f1, h028_f2, h028_f3, h028_f4, h028_f5, h028_f6, h028_f7, h028_f8, h028_f9);
harness!(Generated029: h029_f0, h029_f1, h029_f2, h029_f3, h029_f4, h029_f5, h029_f6, h029_f7, h029_f8, h029_f9);
harness!(Generated030: h030_f0, h030_f1, h030_f2, h030_f3, h030_f4, h030_f5, h030_f6, h030_f7, h030_f8, h030_f9);
harness!(Generated031: h031_f0, h031_f1, h031_f2, h031_f3, h031_f4, h031_f5, h031_f6, h031_f7, h031_f8, h031_f9);
harness!(Generated032: h032_f0, h032_f1, h032_f2, h032_f3, h032_f4, h032_f5, h032_f6, h032_f7, h032_f8, h032_f9);
harness!(Generated033: h033_f0, h033_f1, h033_f2, h033_f3, h033_f4, h033_f5, h033_f6, h033_f7, h033_f8, h033_f9);
harness!(Generated034: h034_f0, h034_f1, h034_f2, h034_f3, h034_f4, h034_f5, h034_f6, h034_f7, h034_f8, h034_f9);
harness!(Generated035: h035_f0, h035_f1, h035_f2, h035_f3, h035_f4, h035_f5, h035_f6, h035_f7, h035_f8, h035_f9);
harness!(Generated036: h036_f0, h036_f1, h036_f2, h036_f3, h036_f4, h036_f5, h036_f6, h036_f7, h036_f8, h036_f9);
harness!(Generated037: h037_f0, h037_f1, h037_f2, h037_f3, h037_f4, h037_f5, h037_f6, h037_f7, h037_f8, h037_f9);
harness!(Generated038: h038_f0, h038_f1, h038_f2, h038_f3, h038_f4, h038_f5, h038_f6, h038_f7, h038_f8, h038_f9);
harness!(Generated039: h039_f0, h039_f1, h039_f2, h039_f3, h039_f4, h039_f5, h039_f6, h039_f7, h039_f8, h039_f9);
harness!(Generated040: h040_f0, h040_f1, h040_f2, h040_f3, h040_f4, h040_f5, h040_f6, h040_f7, h040_f8, h040_f9);
harness!(Generated041: h041_f0, h041_f1, h041_f2, h041_f3, h041_f4, h041_f5, h041_f6, h041_f7, h041_f8, h041_f9);
harness!(Generated042: h042_f0, h042_f1, h042_f2, h042_f3, h042_f4, h042_f5, h042_f6, h042_f7, h042_f8, h042_f9);
harness!(Generated043: h043_f0, h043_f1, h043_f2, h043_f3, h043_f4, h043_f5, h043_f6, h043_f7, h043_f8, h043_f9);
harness!(Generated044: h044_f0, h044_f1, h044_f2, h044_f3, h044_f4, h044_f5, h044_f6, h044_f7, h044_f8, h044_f9);
harness!(Generated045: h045_f0, h045_f1, h045_f2, h045_f3, h045_f4, h045_f5, h045_f6, h045_f7, h045_f8, h045_f9);
harness!(Generated046: h046_f0, h046_f1, h046_f2, h046_f3, h046_f4, h046_f5, h046_f6, h046_f7, h046_f8, h046_f9);
harness!(Generated047: h047_f0, h047_f1, h047_f2, h047_f3, h047_f4, h047_f5, h047_f6, h047_f7, h047_f8, h047_f9);
harness!(Generated048: h048_f0, h048_f1, h048_f2, h048_f3, h048_f4, h048_f5, h048_f6, h048_f7, h048_f8, h048_f9);
harness!(Generated049: h049_f0, h049_f1, h049_f2, h049_f3, h049_f4, h049_f5, h049_f6, h049_f7, h049_f8, h049_f9);
harness!(Generated050: h050_f0, h050_f1, h050_f2, h050_f3, h050_f4, h050_f5, h050_f6, h050_f7, h050_f8, h050_f9);
harness!(Generated051: h051_f0, h051_f1, h051_f2, h051_f3, h051_f4, h051_f5, h051_f6, h051_f7, h051_f8, h051_f9);
harness!(Generated052: h052_f0, h052_f1, h052_f2, h052_f3, h052_f4, h052_f5, h052_f6, h052_f7, h052_f8, h052_f9);
harness!(Generated053: h053_f0, h053_f1, h053_f2, h053_f3, h053_f4, h053_f5, h053_f6, h053_f7, h053_f8, h053_f9);
harness!(Generated054: h054_f0, h054_f1, h054_f2, h054_f3, h054_f4, h054_f5, h054_f6, h054_f7, h054_f8, h054_f9);
harness!(Generated055: h055_f0, h055_f1, h055_f2, h055_f3, h055_f4, h055_f5, h055_f6, h055_f7, h055_f8, h055_f9);
harness!(Generated056: h056_f0, h056_f1, h056_f2, h056_f3, h056_f4, h056_f5, h056_f6, h056_f7, h056_f8, h056_f9);
harness!(Generated057: h057_f0, h057_f1, h057_f2, h057_f3, h057_f4, h057_f5, h057_f6, h057_f7, h057_f8, h057_f9);
harness!(Generated058: h058_f0, h058_f1, h058_f2, h058_f3, h058_f4, h058_f5, h058_f6, h058_f7, h058_f8, h058_f9);
harness!(Generated059: h059_f0, h059_f1, h059_f2, h059_f3, h059_f4, h059_f5, h059_f6, h059_f7, h059_f8, h059_f9);
harness!(Generated060: h060_f0, h060_f1, h060_f2, h060_f3, h060_f4, h060_f5, h060_f6, h060_f7, h060_f8, h060_f9);
harness!(Generated061: h061_f0, h061_f1, h061_f2, h061_f3, h061_f4, h061_f5, h061_f6, h061_f7, h061_f8, h061_f9);
harness!(Generated062: h062_f0, h062_f1, h062_f2, h062_f3, h062_f4, h062_f5, h062_f6, h062_f7, h062_f8, h062_f9);
harness!(Generated063: h063_f0, h063_f1, h063_f2, h063_f3, h063_f4, h063_f5, h063_f6, h063_f7, h063_f8, h063_f9);
harness!(Generated064: h064_f0, h064_f1, h064_f2, h064_f3, h064_f4, h064_f5, h064_f6, h064_f7, h064_f8, h064_f9);
harness!(Generated065: h065_f0, h065_f1, h065_f2, h065_f3, h065_f4, h065_f5, h065_f6, h065_f7, h065_f8, h065_f9);
harness!(Generated066: h066_f0, h066_f1, h066_f2, h066_f3, h066_f4, h066_f5, h066_f6, h066_f7, h066_f8, h066_f9);
harness!(Generated067: h067_f0, h067_f1, h067_f2, h067_f3, h067_f4, h067_f5, h067_f6, h067_f7, h067_f8, h067_f9);
harness!(Generated068: h068_f0, h068_f1, h068_f2, h068_f3, h068_f4, h068_f5, h068_f6, h068_f7, h068_f8, h068_f9);
harness!(Generated069: h069_f0, h069_f1, h069_f2, h069_f3, h069_f4, h069_f5, h069_f6, h069_f7, h069_f8, h069_f9);
harness!(Generated070: h070_f0, h070_f1, h070_f2, h070_f3, h070_f4, h070_f5, h070_f6, h070_f7, h070_f8, h070_f9);
harness!(Generated071: h071_f0, h071_f1, h071_f2, h071_f3, h071_f4, h071_f5, h071_f6, h071_f7, h071_f8, h071_f9);
harness!(Generated072: h072_f0, h072_f1, h072_f2, h072_f3, h072_f4, h072_f5, h072_f6, h072_f7, h072_f8, h072_f9);
harness!(Generated073: h073_f0, h073_f1, h073_f2, h073_f3, h073_f4, h073_f5, h073_f6, h073_f7, h073_f8, h073_f9);
harness!(Generated074: h074_f0, h074_f1, h074_f2, h074_f3, h074_f4, h074_f5, h074_f6, h074_f7, h074_f8, h074_f9);
harness!(Generated075: h075_f0, h075_f1, h075_f2, h075_f3, h075_f4, h075_f5, h075_f6, h075_f7, h075_f8, h075_f9);
harness!(Generated076: h076_f0, h076_f1, h076_f2, h076_f3, h076_f4, h076_f5, h076_f6, h076_f7, h076_f8, h076_f9);
harness!(Generated077: h077_f0, h077_f1, h077_f2, h077_f3, h077_f4, h077_f5, h077_f6, h077_f7, h077_f8, h077_f9);
harness!(Generated078: h078_f0, h078_f1, h078_f2, h078_f3, h078_f4, h078_f5, h078_f6, h078_f7, h078_f8, h078_f9);
harness!(Generated079: h079_f0, h079_f1, h079_f2, h079_f3, h079_f4, h079_f5, h079_f6, h079_f7, h079_f8, h079_f9);
harness!(Generated080: h080_f0, h080_f1, h080_f2, h080_f3, h080_f4, h080_f5, h080_f6, h080_f7, h080_f8, h080_f9);
harness!(Generated081: h081_f0, h081_f1, h081_f2, h081_f3, h081_f4, h081_f5, h081_f6, h081_f7, h081_f8, h081_f9);
harness!(Generated082: h082_f0, h082_f1, h082_f2, h082_f3, h082_f4, h082_f5, h082_f6, h082_f7, h082_f8, h082_f9);
harness!(Generated083: h083_f0, h083_f1, h083_f2, h083_f3, h083_f4, h083_f5, h083_f6, h083_f7, h083_f8, h083_f9);
harness!(Generated084: h084_f0, h084_f1, h084_f2, h084_f3, h084_f4, h084_f5, h084_f6, h084_f7, h084_f8, h084_f9);
harness!(Generated085: h085_f0, h085_f1, h085_f2, h085_f3, h085_f4, h085_f5, h085_f6, h085_f7, h085_f8, h085_f9);
harness!(Generated086: h086_f0, h086_f1, h086_f2, h086_f3, h086_f4, h086_f5, h086_f6, h086_f7, h086_f8, h086_f9);
harness!(Generated087: h087_f0, h087_f1, h087_f2, h087_f3, h087_f4, h087_f5, h087_f6, h087_f7, h087_f8, h087_f9);
harness!(Generated088: h088_f0, h088_f1, h088_f2, h088_f3, h088_f4, h088_f5, h088_f6, h088_f7, h088_f8, h088_f9);
harness!(Generated089: h089_f0, h089_f1, h089_f2, h089_f3, h089_f4, h089_f5, h089_f6, h089_f7, h089_f8, h089_f9);
harness!(Generated090: h090_f0, h090_f1, h090_f2, h090_f3, h090_f4, h090_f5, h090_f6, h090_f7, h090_f8, h090_f9);
harness!(Generated091: h091_f0, h091_f1, h091_f2, h091_f3, h091_f4, h091_f5, h091_f6, h091_f7, h091_f8, h091_f9);
harness!(Generated092: h092_f0, h092_f1, h092_f2, h092_f3, h092_f4, h092_f5, h092_f6, h092_f7, h092_f8, h092_f9);
harness!(Generated093: h093_f0, h093_f1, h093_f2, h093_f3, h093_f4, h093_f5, h093_f6, h093_f7, h093_f8, h093_f9);
harness!(Generated094: h094_f0, h094_f1, h094_f2, h094_f3, h094_f4, h094_f5, h094_f6, h094_f7, h094_f8, h094_f9);
harness!(Generated095: h095_f0, h095_f1, h095_f2, h095_f3, h095_f4, h095_f5, h095_f6, h095_f7, h095_f8, h095_f9);
harness!(Generated096: h096_f0, h096_f1, h096_f2, h096_f3, h096_f4, h096_f5, h096_f6, h096_f7, h096_f8, h096_f9);
harness!(Generated097: h097_f0, h097_f1, h097_f2, h097_f3, h097_f4, h097_f5, h097_f6, h097_f7, h097_f8, h097_f9);
harness!(Generated098: h098_f0, h098_f1, h098_f2, h098_f3, h098_f4, h098_f5, h098_f6, h098_f7, h098_f8, h098_f9);
harness!(Generated099: h099_f0, h099_f1, h099_f2, h099_f3, h099_f4, h099_f5, h099_f6, h099_f7, h099_f8, h099_f9);
harness!(Generated100: h100_f0, h100_f1, h100_f2, h100_f3, h100_f4, h100_f5, h100_f6, h100_f7, h100_f8, h100_f9);
harness!(Generated101: h101_f0, h101_f1, h101_f2, h101_f3, h101_f4, h101_f5, h101_f6, h101_f7, h101_f8, h101_f9);
harness!(Generated102: h102_f0, h102_f1, h102_f2, h102_f3, h102_f4, h102_f5, h102_f6, h102_f7, h102_f8, h102_f9);
harness!(Generated103: h103_f0, h103_f1, h103_f2, h103_f3, h103_f4, h103_f5, h103_f6, h103_f7, h103_f8, h103_f9);
harness!(Generated104: h104_f0, h104_f1, h104_f2, h104_f3, h104_f4, h104_f5, h104_f6, h104_f7, h104_f8, h104_f9);
harness!(Generated105: h105_f0, h105_f1, h105_f2, h105_f3, h105_f4, h105_f5, h105_f6, h105_f7, h105_f8, h105_f9);
harness!(Generated106: h106_f0, h106_f1, h106_f2, h106_f3, h106_f4, h106_f5, h106_f6, h106_f7, h106_f8, h106_f9);
harness!(Generated107: h107_f0, h107_f1, h107_f2, h107_f3, h107_f4, h107_f5, h107_f6, h107_f7, h107_f8, h107_f9);
harness!(Generated108: h108_f0, h108_f1, h108_f2, h108_f3, h108_f4, h108_f5, h108_f6, h108_f7, h108_f8, h108_f9);
harness!(Generated109: h109_f0, h109_f1, h109_f2, h109_f3, h109_f4, h109_f5, h109_f6, h109_f7, h109_f8, h109_f9);
harness!(Generated110: h110_f0, h110_f1, h110_f2, h110_f3, h110_f4, h110_f5, h110_f6, h110_f7, h110_f8, h110_f9);
harness!(Generated111: h111_f0, h111_f1, h111_f2, h111_f3, h111_f4, h111_f5, h111_f6, h111_f7, h111_f8, h111_f9);
harness!(Generated112: h112_f0, h112_f1, h112_f2, h112_f3, h112_f4, h112_f5, h112_f6, h112_f7, h112_f8, h112_f9);
harness!(Generated113: h113_f0, h113_f1, h113_f2, h113_f3, h113_f4, h113_f5, h113_f6, h113_f7, h113_f8, h113_f9);
harness!(Generated114: h114_f0, h114_f1, h114_f2, h114_f3, h114_f4, h114_f5, h114_f6, h114_f7, h114_f8, h114_f9);
harness!(Generated115: h115_f0, h115_f1, h115_f2, h115_f3, h115_f4, h115_f5, h115_f6, h115_f7, h115_f8, h115_f9);
harness!(Generated116: h116_f0, h116_f1, h116_f2, h116_f3, h116_f4, h116_f5, h116_f6, h116_f7, h116_f8, h116_f9);
harness!(Generated117: h117_f0, h117_f1, h117_f2, h117_f3, h117_f4, h117_f5, h117_f6, h117_f7, h117_f8, h117_f9);
harness!(Generated118: h118_f0, h118_f1, h118_f2, h118_f3, h118_f4, h118_f5, h118_f6, h118_f7, h118_f8, h118_f9);
harness!(Generated119: h119_f0, h119_f1, h119_f2, h119_f3, h119_f4, h119_f5, h119_f6, h119_f7, h119_f8, h119_f9);
harness!(Generated120: h120_f0, h120_f1, h120_f2, h120_f3, h120_f4, h120_f5, h120_f6, h120_f7, h120_f8, h120_f9);
harness!(Generated121: h121_f0, h121_f1, h121_f2, h121_f3, h121_f4, h121_f5, h121_f6, h121_f7, h121_f8, h121_f9);
harness!(Generated122: h122_f0, h122_f1, h122_f2, h122_f3, h122_f4, h122_f5, h122_f6, h122_f7, h122_f8, h122_f9);
harness!(Generated123: h123_f0, h123_f1, h123_f2, h123_f3, h123_f4, h123_f5, h123_f6, h123_f7, h123_f8, h123_f9);
harness!(Generated124: h124_f0, h124_f1, h124_f2, h124_f3, h124_f4, h124_f5, h124_f6, h124_f7, h124_f8, h124_f9);
harness!(Generated125: h125_f0, h125_f1, h125_f2, h125_f3, h125_f4, h125_f5, h125_f6, h125_f7, h125_f8, h125_f9);
harness!(Generated126: h126_f0, h126_f1, h126_f2, h126_f3, h126_f4, h126_f5, h126_f6, h126_f7, h126_f8, h126_f9);
harness!(Generated127: h127_f0, h127_f1, h127_f2, h127_f3, h127_f4, h127_f5, h127_f6, h127_f7, h127_f8, h127_f9);
harness!(Generated128: h128_f0, h128_f1, h128_f2, h128_f3, h128_f4, h128_f5, h128_f6, h128_f7, h128_f8, h128_f9);
harness!(Generated129: h129_f0, h129_f1, h129_f2, h129_f3, h129_f4, h129_f5, h129_f6, h129_f7, h129_f8, h129_f9);
harness!(Generated130: h130_f0, h130_f1, h130_f2, h130_f3, h130_f4, h130_f5, h130_f6, h130_f7, h130_f8, h130_f9);
harness!(Generated131: h131_f0, h131_f1, h131_f2, h131_f3, h131_f4, h131_f5, h131_f6, h131_f7, h131_f8, h131_f9);
harness!(Generated132: h132_f0, h132_f1, h132_f2, h132_f3, h132_f4, h132_f5, h132_f6, h132_f7, h132_f8, h132_f9);
harness!(Generated133: h133_f0, h133_f1, h133_f2, h133_f3, h133_f4, h133_f5, h133_f6, h133_f7, h133_f8, h133_f9);
harness!(Generated134: h134_f0, h134_f1, h134_f2, h134_f3, h134_f4, h134_f5, h134_f6, h134_f7, h134_f8, h134_f9);
harness!(Generated135: h135_f0, h135_f1, h135_f2, h135_f3, h135_f4, h135_f5, h135_f6, h135_f7, h135_f8, h135_f9);
harness!(Generated136: h136_f0, h136_f1, h136_f2, h136_f3, h136_f4, h136_f5, h136_f6, h136_f7, h136_f8, h136_f9);
harness!(Generated137: h137_f0, h137_f1, h137_f2, h137_f3, h137_f4, h137_f5, h137_f6, h137_f7, h137_f8, h137_f9);
harness!(Generated138: h138_f0, h138_f1, h138_f2, h138_f3, h138_f4, h138_f5, h138_f6, h138_f7, h138_f8, h138_f9);
harness!(Generated139: h139_f0, h139_f1, h139_f2, h139_f3, h139_f4, h139_f5, h139_f6, h139_f7, h139_f8, h139_f9);
harness!(Generated140: h140_f0, h140_f1, h140_f2, h140_f3, h140_f4, h140_f5, h140_f6, h140_f7, h140_f8, h140_f9);
harness!(Generated141: h141_f0, h141_f1, h141_f2, h141_f3, h141_f4, h141_f5, h141_f6, h141_f7, h141_f8, h141_f9);
harness!(Generated142: h142_f0, h142_f1, h142_f2, h142_f3, h142_f4, h142_f5, h142_f6, h142_f7, h142_f8, h142_f9);
harness!(Generated143: h143_f0, h143_f1, h143_f2, h143_f3, h143_f4, h143_f5, h143_f6, h143_f7, h143_f8, h143_f9);
harness!(Generated144: h144_f0, h144_f1, h144_f2, h144_f3, h144_f4, h144_f5, h144_f6, h144_f7, h144_f8, h144_f9);
harness!(Generated145: h145_f0, h145_f1, h145_f2, h145_f3, h145_f4, h145_f5, h145_f6, h145_f7, h145_f8, h145_f9);
harness!(Generated146: h146_f0, h146_f1, h146_f2, h146_f3, h146_f4, h146_f5, h146_f6, h146_f7, h146_f8, h146_f9);
harness!(Generated147: h147_f0, h147_f1, h147_f2, h147_f3, h147_f4, h147_f5, h147_f6, h147_f7, h147_f8, h147_f9);
harness!(Generated148: h148_f0, h148_f1, h148_f2, h148_f3, h148_f4, h148_f5, h148_f6, h148_f7, h148_f8, h148_f9);
harness!(Generated149: h149_f0, h149_f1, h149_f2, h149_f3, h149_f4, h149_f5, h149_f6, h149_f7, h149_f8, h149_f9);
harness!(Generated150: h150_f0, h150_f1, h150_f2, h150_f3, h150_f4, h150_f5, h150_f6, h150_f7, h150_f8, h150_f9);
harness!(Generated151: h151_f0, h151_f1, h151_f2, h151_f3, h151_f4, h151_f5, h151_f6, h151_f7, h151_f8, h151_f9);
harness!(Generated152: h152_f0, h152_f1, h152_f2, h152_f3, h152_f4, h152_f5, h152_f6, h152_f7, h152_f8, h152_f9);
harness!(Generated153: h153_f0, h153_f1, h153_f2, h153_f3, h153_f4, h153_f5, h153_f6, h153_f7, h153_f8, h153_f9);
harness!(Generated154: h154_f0, h154_f1, h154_f2, h154_f3, h154_f4, h154_f5, h154_f6, h154_f7, h154_f8, h154_f9);
harness!(Generated155: h155_f0, h155_f1, h155_f2, h155_f3, h155_f4, h155_f5, h155_f6, h155_f7, h155_f8, h155_f9);
harness!(Generated156: h156_f0, h156_f1, h156_f2, h156_f3, h156_f4, h156_f5, h156_f6, h156_f7, h156_f8, h156_f9);
harness!(Generated157: h157_f0, h157_f1, h157_f2, h157_f3, h157_f4, h157_f5, h157_f6, h157_f7, h157_f8, h157_f9);
harness!(Generated158: h158_f0, h158_f1, h158_f2, h158_f3, h158_f4, h158_f5, h158_f6, h158_f7, h158_f8, h158_f9);
harness!(Generated159: h159_f0, h159_f1, h159_f2, h159_f3, h159_f4, h159_f5, h159_f6, h159_f7, h159_f8, h159_f9);
harness!(Generated160: h160_f0, h160_f1, h160_f2, h160_f3, h160_f4, h160_f5, h160_f6, h160_f7, h160_f8, h160_f9);
harness!(Generated161: h161_f0, h161_f1, h161_f2, h161_f3, h161_f4, h161_f5, h161_f6, h161_f7, h161_f8, h161_f9);
harness!(Generated162: h162_f0, h162_f1, h162_f2, h162_f3, h162_f4, h162_f5, h162_f6, h162_f7, h162_f8, h162_f9);
harness!(Generated163: h163_f0, h163_f1, h163_f2, h163_f3, h163_f4, h163_f5, h163_f6, h163_f7, h163_f8, h163_f9);
harness!(Generated164: h164_f0, h164_f1, h164_f2, h164_f3, h164_f4, h164_f5, h164_f6, h164_f7, h164_f8, h164_f9);
harness!(Generated165: h165_f0, h165_f1, h165_f2, h165_f3, h165_f4, h165_f5, h165_f6, h165_f7, h165_f8, h165_f9);
harness!(Generated166: h166_f0, h166_f1, h166_f2, h166_f3, h166_f4, h166_f5, h166_f6, h166_f7, h166_f8, h166_f9);
harness!(Generated167: h167_f0, h167_f1, h167_f2, h167_f3, h167_f4, h167_f5, h167_f6, h167_f7, h167_f8, h167_f9);
harness!(Generated168: h168_f0, h168_f1, h168_f2, h168_f3, h168_f4, h168_f5, h168_f6, h168_f7, h168_f8, h168_f9);
harness!(Generated169: h169_f0, h169_f1, h169_f2, h169_f3, h169_f4, h169_f5, h169_f6, h169_f7, h169_f8, h169_f9);
harness!(Generated170: h170_f0, h170_f1, h170_f2, h170_f3, h170_f4, h170_f5, h170_f6, h170_f7, h170_f8, h170_f9);
harness!(Generated171: h171_f0, h171_f1, h171_f2, h171_f3, h171_f4, h171_f5, h171_f6, h171_f7, h171_f8, h171_f9);
harness!(Generated172: h172_f0, h172_f1, h172_f2, h172_f3, h172_f4, h172_f5, h172_f6, h172_f7, h172_f8, h172_f9);
harness!(Generated173: h173_f0, h173_f1, h173_f2, h173_f3, h173_f4, h173_f5, h173_f6, h173_f7, h173_f8, h173_f9);
harness!(Generated174: h174_f0, h174_f1, h174_f2, h174_f3, h174_f4, h174_f5, h174_f6, h174_f7, h174_f8, h174_f9);
harness!(Generated175: h175_f0, h175_f1, h175_f2, h175_f3, h175_f4, h175_f5, h175_f6, h175_f7, h175_f8, h175_f9);
harness!(Generated176: h176_f0, h176_f1, h176_f2, h176_f3, h176_f4, h176_f5, h176_f6, h176_f7, h176_f8, h176_f9);
harness!(Generated177: h177_f0, h177_f1, h177_f2, h177_f3, h177_f4, h177_f5, h177_f6, h177_f7, h177_f8, h177_f9);
harness!(Generated178: h178_f0, h178_f1, h178_f2, h178_f3, h178_f4, h178_f5, h178_f6, h178_f7, h178_f8, h178_f9);
harness!(Generated179: h179_f0, h179_f1, h179_f2, h179_f3, h179_f4, h179_f5, h179_f6, h179_f7, h179_f8, h179_f9);
harness!(Generated180: h180_f0, h180_f1, h180_f2, h180_f3, h180_f4, h180_f5, h180_f6, h180_f7, h180_f8, h180_f9);
harness!(Generated181: h181_f0, h181_f1, h181_f2, h181_f3, h181_f4, h181_f5, h181_f6, h181_f7, h181_f8, h181_f9);
harness!(Generated182: h182_f0, h182_f1, h182_f2, h182_f3, h182_f4, h182_f5, h182_f6, h182_f7, h182_f8, h182_f9);
harness!(Generated183: h183_f0, h183_f1, h183_f2, h183_f3, h183_f4, h183_f5, h183_f6, h183_f7, h183_f8, h183_f9);
harness!(Generated184: h184_f0, h184_f1, h184_f2, h184_f3, h184_f4, h184_f5, h184_f6, h184_f7, h184_f8, h184_f9);
harness!(Generated185: h185_f0, h185_f1, h185_f2, h185_f3, h185_f4, h185_f5, h185_f6, h185_f7, h185_f8, h185_f9);
harness!(Generated186: h186_f0, h186_f1, h186_f2, h186_f3, h186_f4, h186_f5, h186_f6, h186_f7, h186_f8, h186_f9);
harness!(Generated187: h187_f0, h187_f1, h187_f2, h187_f3, h187_f4, h187_f5, h187_f6, h187_f7, h187_f8, h187_f9);
harness!(Generated188: h188_f0, h188_f1, h188_f2, h188_f3, h188_f4, h188_f5, h188_f6, h188_f7, h188_f8, h188_f9);
harness!(Generated189: h189_f0, h189_f1, h189_f2, h189_f3, h189_f4, h189_f5, h189_f6, h189_f7, h189_f8, h189_f9);
harness!(Generated190: h190_f0, h190_f1, h190_f2, h190_f3, h190_f4, h190_f5, h190_f6, h190_f7, h190_f8, h190_f9);
harness!(Generated191: h191_f0, h191_f1, h191_f2, h191_f3, h191_f4, h191_f5, h191_f6, h191_f7, h191_f8, h191_f9);
harness!(Generated192: h192_f0, h192_f1, h192_f2, h192_f3, h192_f4, h192_f5, h192_f6, h192_f7, h192_f8, h192_f9);
harness!(Generated193: h193_f0, h193_f1, h193_f2, h193_f3, h193_f4, h193_f5, h193_f6, h193_f7, h193_f8, h193_f9);
harness!(Generated194: h194_f0, h194_f1, h194_f2, h194_f3, h194_f4, h194_f5, h194_f6, h194_f7, h194_f8, h194_f9);
harness!(Generated195: h195_f0, h195_f1, h195_f2, h195_f3, h195_f4, h195_f5, h195_f6, h195_f7, h195_f8, h195_f9);
harness!(Generated196: h196_f0, h196_f1, h196_f2, h196_f3, h196_f4, h196_f5, h196_f6, h196_f7, h196_f8, h196_f9);
harness!(Generated197: h197_f0, h197_f1, h197_f2, h197_f3, h197_f4, h197_f5, h197_f6, h197_f7, h197_f8, h197_f9);
harness!(Generated198: h198_f0, h198_f1, h198_f2, h198_f3, h198_f4, h198_f5, h198_f6, h198_f7, h198_f8, h198_f9);
harness!(Generated199: h199_f0, h199_f1, h199_f2, h199_f3, h199_f4, h199_f5, h199_f6, h199_f7, h199_f8, h199_f9);

fn register_all(builder: AgentBuilder) -> AgentBuilder {
    let mut builder = builder;
    for name in hpd_agent::harness::HarnessInfo::linked()
        .map(hpd_agent::harness::HarnessInfo::name)
        .filter(|n| n.starts_with("Generated"))
    {
        builder = builder
            .with_tool_harness_reference(&hpd_agent::config::ToolHarnessReference::new(name));
    }
    builder
}

#[tokio::test]
async fn two_hundred_containers_and_no_members() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Generated123", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "h123_f7", r#"{"x": 7}"#)]),
        ChatResponse::text("done"),
    ]);
    let agent = register_all(
        AgentBuilder::new().with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide),
    )
    .with_chat_client(client.clone())
    .build()
    .expect("agent builds");
    let output = agent.run("go").await.expect("run succeeds");
    assert_eq!(output.text, "done");

    let requests = client.requests();
    let first = requests[0].tool_names();
    assert_eq!(first.len(), 200, "one definition per container");
    assert!(
        first.iter().all(|n| n.starts_with("Generated")),
        "only containers: {first:?}"
    );
    assert_eq!(
        requests[0].tools[0].description,
        "A generated harness (functions: h000_f0, h000_f1, h000_f2, h000_f3, h000_f4, h000_f5, h000_f6, h000_f7, h000_f8, h000_f9)"
    );

    let second = requests[1].tool_names();
    assert_eq!(second.len(), 199 + 10);
    assert!(!second.contains(&"Generated123"));
    assert_eq!(
        &second[199..],
        [
            "h123_f0", "h123_f1", "h123_f2", "h123_f3", "h123_f4", "h123_f5", "h123_f6", "h123_f7",
            "h123_f8", "h123_f9"
        ]
    );
    assert_eq!(requests[2].tool_result("c2"), Some(("7", false)));
}
