//! The registry is the one place a codec is known: every registered codec is reachable by each
//! of its names through `zarr.json`'s codec list, builds, runs, and writes its metadata back in a
//! form that parses to the same codec; and no codec's name is spelled out in zarrdb's sources
//! outside its own module.

use std::collections::BTreeSet;
use std::path::Path;

use super::{find, Build, Registration, REGISTRY};
use crate::codec::{ChunkSpec, CodecChain};
use crate::error::CodecError;
use crate::metadata::{DataType, FillValue, NamedConfig};

fn spec(data_type: &str) -> ChunkSpec {
    let data_type = DataType::from_json(&serde_json::Value::String(data_type.into())).unwrap();
    ChunkSpec { shape: vec![4, 5], fill_value: FillValue::zero(data_type.clone()), data_type }
}

#[test]
fn names_are_registered_once() {
    let mut seen = BTreeSet::new();
    for r in REGISTRY {
        assert!(!r.names.is_empty());
        for name in r.names {
            assert!(seen.insert(*name), "\"{name}\" is registered twice");
            assert_eq!(find(name).unwrap().names, r.names, "{name}");
        }
    }
    assert!(find("no-such-codec").is_none());
}

#[test]
fn every_registered_codec_is_reachable_runs_and_round_trips_its_metadata() {
    for r in REGISTRY {
        let name = r.names[0];
        let Some(example) = r.example else {
            assert!(matches!(r.build, Build::Unavailable(_)), "{name} runs but has no example chain");
            continue;
        };
        let codecs = NamedConfig::parse_list(&serde_json::from_str(example.codecs).unwrap()).unwrap();
        assert!(codecs.iter().any(|c| c.name == name), "{name}'s example does not use it");
        let spec = spec(example.data_type);
        let chain = CodecChain::from_metadata(&codecs, &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Canonical metadata parses back to a chain that writes the same metadata.
        let written = chain.to_metadata();
        assert!(written.iter().any(|c| c.name == name), "{name} is missing from {written:?}");
        let again = CodecChain::from_metadata(&written, &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(again.to_metadata(), written, "{name}");
        let decoded = if spec.data_type.is_variable_length() {
            crate::codec::vlen::build((0..20).map(|_| &b"ab"[..]), name).unwrap()
        } else {
            vec![0u8; spec.num_bytes() as usize]
        };
        let encoded = chain.encode(&decoded[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(encoded.len() as u64 <= chain.max_encoded_size(), "{name} exceeds its bound");
        assert_eq!(again.decode(encoded).unwrap_or_else(|e| panic!("{name}: {e}")), decoded, "{name}");
    }
}

#[test]
fn unavailable_codecs_open_and_refuse_to_run_under_each_name() {
    for r in REGISTRY.iter().filter(|r| matches!(r.build, Build::Unavailable(_))) {
        let Build::Unavailable(kind) = r.build else { unreachable!() };
        for name in r.names {
            let codec = serde_json::json!({"name": name});
            let le = serde_json::json!({"name": "bytes", "configuration": {"endian": "little"}});
            let list = match kind {
                super::Kind::ArrayToArray => serde_json::json!([codec, le]),
                super::Kind::ArrayToBytes => serde_json::json!([codec]),
                super::Kind::BytesToBytes => serde_json::json!([le, codec]),
            };
            let chain = CodecChain::from_metadata(&NamedConfig::parse_list(&list).unwrap(), &spec("float32")).unwrap();
            assert!(matches!(chain.check_runnable(), Err(CodecError::Unavailable { name: n }) if n == *name));
        }
    }
}

#[test]
fn every_v2_form_gives_its_own_codec() {
    let mut ids = BTreeSet::new();
    let empty = serde_json::Map::new();
    let params = super::V2Params { params: &empty, key: "a/.zarray", field: "compressor" };
    for r in REGISTRY {
        let Some(v2) = r.v2 else { continue };
        assert!(ids.insert(v2.id), "numcodecs id \"{}\" is registered twice", v2.id);
        assert_eq!(super::find_v2(v2.id).unwrap().0.names, r.names, "{}", v2.id);
        assert!(v2.compressor.is_some() || v2.filter.is_some(), "{}: a v2 form that reads nothing", v2.id);
        let mut converted = Vec::new();
        if let Some(convert) = v2.compressor {
            converted.push(convert(&params, &DataType::Float32).unwrap_or_else(|e| panic!("{}: {e}", v2.id)));
            assert!(super::v2_compressor_ids().contains(&v2.id));
        }
        match v2.filter {
            Some(super::V2Filter::Bytes(convert)) => {
                converted.push(convert(&params, &DataType::Float32).unwrap_or_else(|e| panic!("{}: {e}", v2.id)))
            }
            Some(super::V2Filter::Element { .. }) => assert!(matches!(r.build, Build::ArrayToArray(_)), "{}", v2.id),
            None => {}
        }
        for codec in converted {
            // numcodecs' defaults make a codec of this registration that builds after `bytes`.
            assert_eq!(codec.name, r.names[0], "{}", v2.id);
            let le = serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
            let chain = [NamedConfig::parse_list(&le).unwrap().remove(0), codec];
            CodecChain::from_metadata(&chain, &spec("float32")).unwrap_or_else(|e| panic!("{}: {e}", v2.id));
        }
    }
    assert!(super::find_v2("zfpy").is_none());
}

/// Files allowed to spell out a registered codec name besides its own module, with the reason.
/// Each entry is a place the registry does not reach yet or a string that only looks like a
/// codec name; the list shrinks as dispatch moves into the codecs' modules.
const ELSEWHERE: &[(&str, &str, &str)] = &[
    // The default chain `ArrayMetadata::new` writes, in the metadata layer below the codecs.
    ("src/metadata/array.rs", "bytes", "default chain"),
    ("src/metadata/array.rs", "vlen-utf8", "default chain"),
    ("src/metadata/array.rs", "vlen-bytes", "default chain"),
    // blosc's inner compressors share names with codecs.
    ("src/codec/blosc.rs", "zstd", "blosc cname"),
    // The element-check error names the `bytes` codec whose size check it repeats.
    ("src/codec/mod.rs", "bytes", "size check of the as-stored path"),
    ("src/array/check.rs", "bytes", "size check of the as-stored path"),
    // JSON output fields of the CLI.
    ("src/cli/transfer.rs", "bytes", "report field"),
    ("src/cli/tree.rs", "bytes", "output field suffix"),
    // The import's mapping of v2, v1 and draft layouts.
    ("src/transfer/plan/dtype.rs", "vlen-utf8", "v2 object codec id"),
    ("src/transfer/plan/dtype.rs", "vlen-bytes", "v2 object codec id"),
    ("src/transfer/plan/filters.rs", "vlen-utf8", "v2 object codec id"),
    ("src/transfer/plan/filters.rs", "vlen-bytes", "v2 object codec id"),
];

/// The string literals of `source` outside comments and `#[cfg(test)]` modules.
fn literals(source: &str) -> Vec<String> {
    let code = source.split("\n#[cfg(test)]").next().unwrap_or_default();
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let mut rest = line;
        while let Some(start) = rest.find('"') {
            // Byte strings (`b"..."`) are not names.
            let byte = rest[..start].ends_with('b');
            let after = &rest[start + 1..];
            let Some(end) = after.find('"') else { break };
            if !byte {
                out.push(after[..end].to_owned());
            }
            rest = &after[end + 1..];
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && !path.file_name().unwrap().to_string_lossy().starts_with("tests")
            && !path.file_name().unwrap().to_string_lossy().ends_with("_tests.rs")
        {
            out.push(path);
        }
    }
}

#[test]
fn no_codec_name_is_spelled_out_outside_its_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    sources(&root.join("python/src"), &mut files);
    let registered: Vec<(&str, &Registration)> =
        REGISTRY.iter().flat_map(|r| r.names.iter().map(move |n| (*n, r))).collect();
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        for literal in literals(&text) {
            for (name, r) in &registered {
                let home = r.home.replace('\\', "/");
                if literal == *name
                    && !home.ends_with(&rel)
                    && !rel.ends_with("codec/registry.rs")
                    && !ELSEWHERE.iter().any(|(f, n, _)| *f == rel && n == name)
                {
                    found.push(format!("{rel}: \"{name}\" (registered in {home})"));
                }
            }
        }
    }
    assert!(found.is_empty(), "codec names outside their modules:\n{}", found.join("\n"));
}

#[test]
fn the_list_of_exceptions_holds_no_stale_entry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, name, why) in ELSEWHERE {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(find(name).is_some(), "{name} is not a registered codec");
        assert!(
            literals(&text).iter().any(|l| l == name),
            "{file} no longer spells \"{name}\" ({why}): drop the entry"
        );
    }
}
