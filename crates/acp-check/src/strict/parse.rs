//! Reading the table notation (see the header of `v1.types`).

use super::ty::{Defs, Field, Handler, Method, TableError, Ty};
use serde_json::Value;
use std::collections::HashMap;

/// The types and the methods of a table.
pub(super) fn table(text: &str) -> Result<(Defs, HashMap<String, Method>), TableError> {
    let mut defs = HashMap::new();
    let mut methods = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |message: String| TableError::Line {
            line: n + 1,
            message,
        };
        if let Some(rest) = line.strip_prefix("@method ") {
            let words: Vec<&str> = rest.split_whitespace().collect();
            let handler = match words.first() {
                Some(&"agent") => Handler::Agent,
                Some(&"client") => Handler::Client,
                Some(&"protocol") => Handler::Protocol,
                other => return Err(at(format!("unknown side {other:?}"))),
            };
            let (Some(name), Some(params)) = (words.get(1), words.get(2)) else {
                return Err(at("@method SIDE NAME PARAMS [RESULT]".into()));
            };
            let method = Method {
                handler,
                params: params.to_string(),
                result: words.get(3).map(|s| s.to_string()),
            };
            methods.insert(name.to_string(), method);
            continue;
        }
        let Some((name, ty)) = line.split_once(" = ") else {
            return Err(at("expected `Name = type`".into()));
        };
        let mut p = Parser {
            s: ty.as_bytes(),
            i: 0,
        };
        let ty = p.expr().map_err(at)?;
        p.ws();
        if p.i != p.s.len() {
            return Err(at(format!("unexpected text at column {}", p.i + 1)));
        }
        defs.insert(name.trim().to_string(), ty);
    }
    for (name, m) in &methods {
        for ty in std::iter::once(&m.params).chain(&m.result) {
            if !defs.contains_key(ty) {
                return Err(TableError::UnknownType {
                    method: name.clone(),
                    ty: ty.clone(),
                });
            }
        }
    }
    Ok((defs, methods))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{}` at column {}", c as char, self.i + 1))
        }
    }

    fn word(&mut self) -> String {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"_$-.".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn string(&mut self) -> Result<String, String> {
        self.ws();
        let start = self.i;
        self.expect(b'"')?;
        while self.i < self.s.len() && self.s[self.i] != b'"' {
            if self.s[self.i] == b'\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        self.expect(b'"')?;
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// `alt (| alt)*`
    fn expr(&mut self) -> Result<Ty, String> {
        let mut alts = vec![self.both()?];
        while self.eat(b'|') {
            alts.push(self.both()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap()
        } else {
            Ty::Either(alts)
        })
    }

    /// `term (& term)*`
    fn both(&mut self) -> Result<Ty, String> {
        let mut parts = vec![self.term()?];
        while self.eat(b'&') {
            parts.push(self.term()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap()
        } else {
            Ty::Both(parts)
        })
    }

    fn term(&mut self) -> Result<Ty, String> {
        let mut ty = self.atom()?;
        while self.s.get(self.i) == Some(&b'?') {
            self.i += 1;
            ty = Ty::Nullable(Box::new(ty));
        }
        Ok(ty)
    }

    fn atom(&mut self) -> Result<Ty, String> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'(') => {
                self.i += 1;
                let ty = self.expr()?;
                self.expect(b')')?;
                Ok(ty)
            }
            Some(b'[') => {
                self.i += 1;
                let ty = self.expr()?;
                self.expect(b']')?;
                Ok(Ty::List(Box::new(ty)))
            }
            Some(b'{') => {
                self.i += 1;
                let mut fields = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        let name = self.word();
                        if name.is_empty() {
                            return Err(format!("expected a field name at column {}", self.i + 1));
                        }
                        let required = self.eat(b'!');
                        self.expect(b':')?;
                        let ty = self.expr()?;
                        fields.push(Field { name, required, ty });
                        if self.eat(b'}') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                Ok(Ty::Object(fields))
            }
            Some(b'"') => Ok(Ty::Const(Value::String(self.string()?))),
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                let w = self.word();
                let n: i64 = w.parse().map_err(|_| format!("bad number {w}"))?;
                Ok(Ty::Const(Value::from(n)))
            }
            _ => {
                let w = self.word();
                Ok(match w.as_str() {
                    "any" => Ty::Any,
                    "null" => Ty::Null,
                    "bool" => Ty::Bool,
                    "str" => Ty::Str,
                    "num" => Ty::Num,
                    "obj" => Ty::Obj,
                    "int" | "i64" => Ty::Int(i64::MIN.into(), i64::MAX.into()),
                    "i32" => Ty::Int(i32::MIN.into(), i32::MAX.into()),
                    "u16" => Ty::Int(0, u16::MAX.into()),
                    "u32" => Ty::Int(0, u32::MAX.into()),
                    "u64" => Ty::Int(0, u64::MAX.into()),
                    "map" => {
                        self.expect(b'<')?;
                        let ty = self.expr()?;
                        self.expect(b'>')?;
                        Ty::Map(Box::new(ty))
                    }
                    "tag" => {
                        let tag = self.word();
                        self.expect(b'{')?;
                        let mut variants = Vec::new();
                        loop {
                            self.ws();
                            let lit = if self.s.get(self.i) == Some(&b'"') {
                                Some(self.string()?)
                            } else if self.word() == "_" {
                                None
                            } else {
                                return Err(format!(
                                    "expected a tag value at column {}",
                                    self.i + 1
                                ));
                            };
                            self.expect(b':')?;
                            variants.push((lit, self.expr()?));
                            if self.eat(b'}') {
                                break;
                            }
                            self.expect(b',')?;
                        }
                        Ty::Tagged { tag, variants }
                    }
                    "" => return Err(format!("expected a type at column {}", self.i + 1)),
                    name => Ty::Ref(name.to_string()),
                })
            }
        }
    }
}
