//! `zarrdb check STORE [--json]`: open every node, decode every chunk of every array, verify
//! checksums. Prints one line per problem and a summary (or, with `--json`, one document at the
//! end); exits 1 when anything is wrong.

use std::collections::HashMap;

use serde_json::{json, Value};
use zarrdb::{Group, Node};

use super::{locator, progress, usage, CliError, CliResult};

#[derive(Default)]
struct Tally {
    arrays: u64,
    groups: u64,
    chunks: u64,
    problems: u64,
    /// With `--json`: the problems and notes, printed at the end instead of as found.
    json: Option<(Vec<Value>, Vec<Value>)>,
    /// On a terminal: stored bytes of the arrays checked, of all of them.
    bar: Option<indicatif::ProgressBar>,
    /// With the bar: each array's stored bytes, from the one listing that made its total.
    sizes: HashMap<String, u64>,
}

pub(crate) fn run(store: &str, as_json: bool) -> CliResult {
    // A store that cannot be opened fails the check as damage found in it does: status 1.
    checked(store, as_json).map_err(CliError::into_check_failure)
}

fn checked(store: &str, as_json: bool) -> CliResult {
    let opened = locator::open_with(store, true)?;
    let store = opened.store.clone();
    let mut tally = Tally { json: as_json.then(Default::default), ..Tally::default() };
    let walked = match locator::open_root(store) {
        Ok(Some(node)) => {
            // The total comes from one listing of the store, done only when a bar is drawn (and
            // none is drawn when a node cannot even be listed).
            if let Some(rows) = progress::enabled().then(|| usage::walk(&node).ok()).flatten() {
                let bytes = |u: &usage::Usage| u64::try_from(u.stored).unwrap_or(u64::MAX);
                tally.sizes = rows.iter().filter(|r| r.1 == "array").map(|r| (r.0.clone(), bytes(&r.2))).collect();
                tally.bar = progress::bytes(tally.sizes.values().fold(0u64, |a, b| a.saturating_add(*b)), "check");
            }
            let walked = visit(&node, &mut tally);
            progress::finish(tally.bar.take());
            walked
        }
        // A database (or folder) holding nothing is empty, not damaged.
        Ok(None) if as_json => Ok(()),
        Ok(None) => outln!("empty: no nodes"),
        Err(e) => problem(&mut tally, "/", &e),
    };
    // A database that keeps history: its commits, refs and every version's values too.
    let walked = match opened.database().filter(|db| db.keeps_history()) {
        Some(db) if walked.is_ok() => match db.check_history() {
            Ok(found) => found.iter().try_for_each(|p| problem(&mut tally, &p.key, &p.what)),
            Err(e) => problem(&mut tally, "history", &e),
        },
        _ => walked,
    };
    // The output's reader went away: the walk stopped, but problems found so far still fail.
    let closed = |e: CliError, problems: u64| {
        if e.is_quiet() && problems > 0 {
            CliError::new(format!("check found {problems} problem(s) before its output was closed"))
        } else {
            e
        }
    };
    walked.map_err(|e| closed(e, tally.problems))?;
    let summary = match &tally.json {
        Some((problems, notes)) => outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "groups": tally.groups,
                "arrays": tally.arrays,
                "chunks": tally.chunks,
                "problems": problems,
                "notes": notes,
            }))?
        ),
        None => outln!(
            "checked {} groups, {} arrays, {} chunks: {} problem{}",
            tally.groups,
            tally.arrays,
            tally.chunks,
            tally.problems,
            if tally.problems == 1 { "" } else { "s" }
        ),
    };
    summary.map_err(|e| closed(e, tally.problems))?;
    if tally.problems == 0 {
        Ok(())
    } else {
        Err(CliError::new(format!("check found {} problem(s)", tally.problems)))
    }
}

fn problem(tally: &mut Tally, what: &str, err: &dyn std::fmt::Display) -> CliResult {
    tally.problems += 1;
    let reason = err.to_string().replace('\n', " ");
    match &mut tally.json {
        Some((problems, _)) => {
            problems.push(json!({"where": what, "reason": reason}));
            Ok(())
        }
        None => print_above_bar(&tally.bar, format_args!("PROBLEM {what}: {reason}")),
    }
}

/// A line on stdout while the bar (on stderr, maybe the same terminal) steps aside for it.
fn print_above_bar(bar: &Option<indicatif::ProgressBar>, line: std::fmt::Arguments) -> CliResult {
    match bar {
        Some(bar) => bar.suspend(|| outln!("{line}")),
        None => outln!("{line}"),
    }
}

fn visit(node: &Node, tally: &mut Tally) -> CliResult {
    match node {
        Node::Array(array) => {
            tally.arrays += 1;
            let stored = tally.sizes.get(&array.path().to_string()).copied().unwrap_or(0);
            let checked = array.check();
            progress::advance(&tally.bar, stored);
            match checked {
                Ok(report) => {
                    tally.chunks += report.chunks_checked;
                    for (key, err) in &report.corrupt {
                        // Codec errors already name the chunk key; others get it in front. JSON
                        // gives the key apart always.
                        match err {
                            zarrdb::Error::Codec { .. } if tally.json.is_none() => problem(tally, "chunk", err)?,
                            _ => problem(tally, key, err)?,
                        }
                    }
                    for key in &report.outside_grid {
                        problem(tally, key, &"chunk key outside the chunk grid")?;
                    }
                    for key in &report.unrecognized {
                        let note = format!("not a chunk key of {}; ignored", array.path());
                        match &mut tally.json {
                            Some((_, notes)) => notes.push(json!({"key": key, "note": note})),
                            None => print_above_bar(&tally.bar, format_args!("note {key}: {note}"))?,
                        }
                    }
                }
                Err(e) => problem(tally, array.path().as_str(), &e)?,
            }
            Ok(())
        }
        Node::Group(group) => {
            tally.groups += 1;
            visit_children(group, tally)
        }
    }
}

fn visit_children(group: &Group, tally: &mut Tally) -> CliResult {
    let names = match group.child_names() {
        Ok(names) => names,
        Err(e) => return problem(tally, group.path().as_str(), &e),
    };
    for name in names {
        let path = match group.path().child(&name) {
            Ok(p) => p,
            Err(e) => {
                problem(tally, &name, &e)?;
                continue;
            }
        };
        match Node::open(group.store().clone(), path.as_str()) {
            Ok(node) => visit(&node, tally)?,
            Err(e) => problem(tally, path.as_str(), &e)?,
        }
    }
    Ok(())
}
