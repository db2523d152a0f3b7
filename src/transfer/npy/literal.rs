//! The Python literals of a `.npy` header (`{'descr': '<f4', 'fortran_order': False, 'shape':
//! (3, 4), }`), read into JSON values and written back. Only what NumPy writes there: dicts with
//! string keys, lists, tuples, strings, non-negative integers (with Python 2's `L` suffix), `True`,
//! `False`. Nesting is bounded, so a hostile header cannot exhaust the stack.

use serde_json::{Map, Value};

/// How deep lists, tuples and dicts may nest (a structured type's descr needs 3).
const MAX_DEPTH: usize = 16;

/// Parse `text` as one Python literal, with nothing but white space after it.
pub(super) fn parse(text: &str) -> Result<Value, String> {
    let mut parser = Parser { chars: text.char_indices().peekable(), text };
    let value = parser.value(0)?;
    parser.skip_space();
    match parser.chars.next() {
        None => Ok(value),
        Some((at, c)) => Err(format!("unexpected '{c}' at byte {at} after the header's dict")),
    }
}

struct Parser<'t> {
    chars: std::iter::Peekable<std::str::CharIndices<'t>>,
    text: &'t str,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("literals nested more than {MAX_DEPTH} deep"));
        }
        self.skip_space();
        let Some(&(at, c)) = self.chars.peek() else { return Err("the header ends early".into()) };
        match c {
            '{' => self.dict(depth),
            '[' => self.sequence(']', depth),
            '(' => self.sequence(')', depth),
            '\'' | '"' => self.string().map(Value::String),
            '0'..='9' => self.integer(),
            _ => {
                let rest = &self.text[at..];
                let word: String = rest.chars().take_while(char::is_ascii_alphanumeric).collect();
                let value = match word.as_str() {
                    "True" => Value::Bool(true),
                    "False" => Value::Bool(false),
                    "None" => Value::Null,
                    _ => return Err(format!("unexpected '{c}' at byte {at}")),
                };
                for _ in 0..word.len() {
                    self.chars.next();
                }
                Ok(value)
            }
        }
    }

    /// Items up to `close`, separated by commas, a trailing comma allowed (`(3,)`).
    fn items(&mut self, close: char, mut item: impl FnMut(&mut Self) -> Result<(), String>) -> Result<(), String> {
        self.chars.next(); // the opening bracket
        loop {
            self.skip_space();
            if self.chars.next_if(|&(_, c)| c == close).is_some() {
                return Ok(());
            }
            item(self)?;
            self.skip_space();
            match self.chars.next() {
                Some((_, ',')) => {}
                Some((_, c)) if c == close => return Ok(()),
                Some((at, c)) => return Err(format!("expected ',' or '{close}' at byte {at}, found '{c}'")),
                None => return Err("the header ends early".into()),
            }
        }
    }

    fn sequence(&mut self, close: char, depth: usize) -> Result<Value, String> {
        let mut out = Vec::new();
        self.items(close, |p| {
            out.push(p.value(depth + 1)?);
            Ok(())
        })?;
        Ok(Value::Array(out))
    }

    fn dict(&mut self, depth: usize) -> Result<Value, String> {
        let mut out = Map::new();
        self.items('}', |p| {
            p.skip_space();
            let key = match p.chars.peek() {
                Some((_, '\'' | '"')) => p.string()?,
                _ => return Err("a dict key that is not a string".into()),
            };
            p.skip_space();
            match p.chars.next() {
                Some((_, ':')) => {}
                _ => return Err(format!("no ':' after the key '{key}'")),
            }
            let value = p.value(depth + 1)?;
            if out.insert(key.clone(), value).is_some() {
                return Err(format!("the key '{key}' appears twice"));
            }
            Ok(())
        })?;
        Ok(Value::Object(out))
    }

    fn integer(&mut self) -> Result<Value, String> {
        let mut digits = String::new();
        while let Some((_, c)) = self.chars.next_if(|(_, c)| c.is_ascii_digit()) {
            digits.push(c);
        }
        // Python 2 wrote long integers with an `L`.
        self.chars.next_if(|&(_, c)| c == 'L');
        let n: u64 = digits.parse().map_err(|_| format!("the integer {digits} is too large"))?;
        Ok(Value::from(n))
    }

    fn string(&mut self) -> Result<String, String> {
        let Some((_, quote)) = self.chars.next() else { return Err("the header ends early".into()) };
        let mut out = String::new();
        loop {
            let Some((at, c)) = self.chars.next() else { return Err("a string is not closed".into()) };
            match c {
                c if c == quote => return Ok(out),
                '\\' => out.push(self.escape(at)?),
                '\n' => return Err(format!("a line break inside a string at byte {at}")),
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self, at: usize) -> Result<char, String> {
        let Some((_, c)) = self.chars.next() else { return Err("a string is not closed".into()) };
        let hex = |p: &mut Self, n: usize| -> Result<char, String> {
            let digits: String = (0..n).filter_map(|_| p.chars.next().map(|(_, c)| c)).collect();
            u32::from_str_radix(&digits, 16)
                .ok()
                .filter(|_| digits.len() == n)
                .and_then(char::from_u32)
                .ok_or_else(|| format!("a bad escape \\{c}{digits} at byte {at}"))
        };
        Ok(match c {
            '\\' | '\'' | '"' => c,
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            '0' => '\0',
            'x' => hex(self, 2)?,
            'u' => hex(self, 4)?,
            'U' => hex(self, 8)?,
            other => return Err(format!("an unknown escape \\{other} at byte {at}")),
        })
    }
}

/// `text` as a Python string literal in single quotes.
pub(super) fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{parse, string};

    #[test]
    fn numpy_headers_parse() {
        let v = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }        \n").unwrap();
        assert_eq!(v, json!({"descr": "<f4", "fortran_order": false, "shape": [3, 4]}));
        let v = parse("{'descr': [('a', '<i8'), (\"b\", '|S3')], 'fortran_order': True, 'shape': (2L,)}").unwrap();
        assert_eq!(v, json!({"descr": [["a", "<i8"], ["b", "|S3"]], "fortran_order": true, "shape": [2]}));
        assert_eq!(parse("{'shape': ()}").unwrap(), json!({"shape": []}));
        assert_eq!(parse(&format!("[{}]", string("it's \\ é\n"))).unwrap(), json!(["it's \\ é\n"]));
    }

    #[test]
    fn malformed_headers_are_errors() {
        for bad in [
            "",
            "{",
            "{'a' 1}",
            "{'a': 1, 'a': 2}",
            "{1: 2}",
            "{'a': (1, 2}",
            "{'a': 'x}",
            "{'a': 99999999999999999999999}",
            "{'a': -1}",
            "{'a': 1} x",
            "{'a': '\\q'}",
            "{'a': '\\x4'}",
            "{'a': Tru}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(parse(&deep).unwrap_err().contains("nested"));
    }
}
