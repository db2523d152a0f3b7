//! `zarrdb completions bash` loads in bash and completes commands and options: the script is
//! sourced by a real bash, which then completes `zarrdb cr` to `create` and `zarrdb create db /a
//! --dt` to `--dtype`. The other shells' scripts are generated (their shells are not installed).

use std::process::Command;

fn zarrdb(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// What bash's completion function offers for the words of `line` (the last one being typed).
fn complete(script: &std::path::Path, line: &str) -> Vec<String> {
    let words: Vec<&str> = line.split(' ').collect();
    let program = format!(
        "set -e; source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; \
         _zarrdb zarrdb '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" "),
        words.len() - 1,
        line.len(),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash").args(["--norc", "-c", &program]).output().expect("bash");
    assert!(out.status.success(), "bash: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

#[test]
fn bash_completes_commands_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("zarrdb.bash");
    std::fs::write(&script, zarrdb(&["completions", "bash"])).unwrap();
    assert_eq!(complete(&script, "zarrdb cr"), ["create"]);
    assert_eq!(complete(&script, "zarrdb create data.zarrdb /a --dt"), ["--dtype"]);
    let all = complete(&script, "zarrdb ");
    for command in ["tree", "cat", "create", "mkgroup", "rm", "mv", "attrs", "resize", "append", "write", "completions"]
    {
        assert!(all.iter().any(|c| c == command), "{command} not offered: {all:?}");
    }
}

#[test]
fn other_shells_get_scripts() {
    assert!(zarrdb(&["completions", "zsh"]).contains("#compdef zarrdb"));
    assert!(zarrdb(&["completions", "fish"]).contains("complete -c zarrdb"));
    let bad = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "an unknown shell is a usage error");
}
