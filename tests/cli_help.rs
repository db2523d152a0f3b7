//! Every command's `--help` carries an example, and `zarrdb --help` the store locators and the
//! exit statuses: the commands are read off `zarrdb --help` itself, so a new command without an
//! example fails here.

#[path = "common/cli.rs"]
mod cli;

use cli::ok_text;

#[test]
fn every_command_has_an_example() {
    let top = ok_text(&["--help"]);
    assert!(top.contains("Exit status: 0 done; 1 diff found differences"), "{top}");
    assert!(top.contains("Stores: a path ending in .zip"), "{top}");
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 20, "{commands:?}");
    for command in commands {
        let help = ok_text(&[command, "--help"]);
        assert!(help.contains("Example"), "zarrdb {command} --help has no example:\n{help}");
    }
}
