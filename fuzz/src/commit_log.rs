//! Target `commit_log`: the bytes of a commit log file (`<database>-log`), as a crash leaves it:
//! every whole record read, its batch decoded, laid out again and read back the same, then the
//! replay a database would make of it (`zarrdb::fuzzing::commit_log`).

/// One input.
pub fn run(data: &[u8]) {
    zarrdb::fuzzing::commit_log(data);
}
