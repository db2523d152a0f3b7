//! Databases with history (format 6) written by earlier builds open with this one:
//! `tests/fixtures/format/<backend>-6h1` (history layout 1: `main` alone), `-6h2` (layout 2:
//! branches, a merge commit, a deleted branch collected) and `-6h3` (layout 3: records holding
//! their changes, a deleted tag, a commit whose changes sit beside its record, `main`'s ref at
//! its head), made by `make_history_fixture.rs`
//! (README.md there). On a copy of each: a read-only open reads every tag and branch exactly
//! (values inline at their entry and under their object keys, a base table and folded records
//! left by a collection), `main`'s log, a diff, a clean `check_history`, and leaves the files
//! byte-identical; a writable open commits, branches, merges, expires and collects, and after a
//! reopen every version, old and new, reads exactly.

#[path = "common/fixture_files.rs"]
mod fixture_files;
#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "fixtures/format/make_history_fixture.rs"]
mod make_history_fixture;

use std::path::Path;

use fixture_files::{copy, files};
use history::contents;
use make_history_fixture::{value, versions, State};
use zarrdb::db::{MergeOutcome, VersionRef};
use zarrdb::{Backend, Database};

const FIXTURES: [(&str, Backend, u32); 9] = [
    ("redb-6h1.zarrdb", Backend::Redb, 1),
    ("lmdb-6h1", Backend::Lmdb, 1),
    ("sled-6h1", Backend::Sled, 1),
    ("redb-6h2.zarrdb", Backend::Redb, 2),
    ("lmdb-6h2", Backend::Lmdb, 2),
    ("sled-6h2", Backend::Sled, 2),
    ("redb-6h3.zarrdb", Backend::Redb, 3),
    ("lmdb-6h3", Backend::Lmdb, 3),
    ("sled-6h3", Backend::Sled, 3),
];

fn name(name: &str) -> VersionRef {
    VersionRef::Name(name.into())
}

/// Every named version reads exactly what it held, `main`'s log lists `log`, the two tags differ
/// by what the second commit changed, and the history checks clean.
fn check(db: &Database, named: &std::collections::BTreeMap<&str, State>, log: &[&str], what: &str) {
    for (version, want) in named {
        let what = format!("{what}: {version}");
        let got = contents(db.open_version(&name(version)).unwrap().store().as_ref(), &what);
        assert_eq!(got, *want, "{what}");
    }
    let messages: Vec<String> = db.log().unwrap().into_iter().map(|c| c.message).collect();
    assert_eq!(messages, log, "{what}: main's log");
    let changed: Vec<(String, Option<u64>, Option<u64>)> =
        db.diff(&name("v1"), &name("v2")).unwrap().into_iter().map(|c| (c.key, c.before, c.after)).collect();
    let want = [
        ("a/c/1".to_owned(), Some(10), Some(10)),
        ("a/c/2".to_owned(), Some(10), None),
        ("a/c/3".to_owned(), Some(6_000), Some(6_000)),
    ];
    assert_eq!(changed, want, "{what}: diff v1 v2");
    assert_eq!(db.check_history().unwrap(), vec![], "{what}: check_history");
}

fn commit(db: &Database, key: &str, seed: u8, len: usize) {
    let txn = db.begin_write().unwrap();
    txn.store().set(key, &value(seed, len)).unwrap();
    txn.commit_with("written by this build", "test").unwrap();
}

fn open(backend: Backend, path: &Path, read_only: bool) -> Database {
    Database::builder().backend(backend).read_only(read_only).open(path).unwrap()
}

#[test]
fn every_history_fixture_reads_and_takes_new_history() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format");
    for (file, backend, layout) in FIXTURES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file);
        copy(&fixtures.join(file), &path);
        let (mut named, mut log) = versions(layout);

        let before = files(&path);
        let db = open(backend, &path, true);
        check(&db, &named, &log, &format!("{file}, read-only"));
        drop(db);
        assert!(files(&path) == before, "{file}: a read-only open changed the files");

        // Writable: a commit on `main`, a branch with a commit merged back, an expiry of every
        // version before the new head that no tag or branch keeps, and a collection.
        let db = open(backend, &path, false);
        check(&db, &named, &log, &format!("{file}, writable"));
        commit(&db, "n/c/0", 40, 5_000);
        db.create_branch("new", &name("main")).unwrap();
        commit(&db.on_branch("new").unwrap(), "n/c/1", 41, 12);
        commit(&db, "a/c/0", 42, 10);
        let merged = db.merge(&VersionRef::Branch("new".into()), "main", "merge new").unwrap();
        assert!(matches!(merged, MergeOutcome::Merged(_)), "{file}: {merged:?}");
        let main = named.get_mut("main").unwrap();
        main.insert("n/c/0".into(), value(40, 5_000));
        let mut new = main.clone();
        new.insert("n/c/1".into(), value(41, 12));
        main.insert("n/c/1".into(), value(41, 12));
        main.insert("a/c/0".into(), value(42, 10));
        named.insert("new", new);
        let head = db.resolve(&VersionRef::Branch("main".into())).unwrap().id;
        db.expire(&VersionRef::Commit(head)).unwrap();
        db.collect().unwrap();
        // `main` keeps its head, the tags' commits, the commit `new` was made at, and (layout 2)
        // the merge of `dev`, which the branch `dev` keeps.
        log = match layout {
            1 => vec!["merge new", "written by this build", "rewrite", "create"],
            _ => vec!["merge new", "written by this build", "merge dev", "rewrite", "create"],
        };
        check(&db, &named, &log, &format!("{file}, after writing"));
        drop(db);
        let db = open(backend, &path, false);
        check(&db, &named, &log, &format!("{file}, reopened"));
    }
}
