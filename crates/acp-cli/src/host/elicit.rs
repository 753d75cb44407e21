//! `acp chat` answers `elicitation/create` on the terminal. A form asks
//! one question per property, then accept, decline or cancel. A URL is
//! shown as plain text and opened in a browser only if the user agrees
//! ([`ask_url`], [`open_url`]); only http and https links are offered
//! ([`refuse_link`]).

use crate::style::Style;
use crate::tty::Tty;
use acp::schema::*;
use std::process::{Command, Stdio};

/// Asks the form on `tty` and builds the answer. Ending the input (or the
/// turn being cancelled) answers `cancel`.
pub fn ask_form(
    tty: &mut Tty,
    message: &str,
    schema: &ElicitationSchema,
    color: bool,
) -> CreateElicitationResponse {
    let style = Style::new(color);
    let mut header = format!("{} {message}\n", style.yellow_bold("? The agent asks:"));
    if let Some(title) = &schema.title {
        header.push_str(&format!("  {title}\n"));
    }
    if let Some(description) = &schema.description {
        header.push_str(&format!("  {}\n", style.dim(description)));
    }
    tty.write(&header);
    let required: Vec<&str> = schema
        .required
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let mut content = OrderedMap::new();
    for (name, property) in schema.properties.iter() {
        let is_required = required.contains(&name);
        loop {
            let (question, default) = describe(name, property, is_required);
            let Some(line) = tty.ask(&format!("  {question}: ")) else {
                tty.write("\n");
                return CreateElicitationResponse::cancel();
            };
            let line = line.trim();
            if line.is_empty() {
                if let Some(value) = default {
                    content.insert(name, value);
                    break;
                }
                if !is_required {
                    break;
                }
                tty.write("  (required)\n");
                continue;
            }
            match parse(property, line) {
                Ok(value) => {
                    content.insert(name, value);
                    break;
                }
                Err(why) => tty.write(&format!("  {why}\n")),
            }
        }
    }
    loop {
        let Some(line) = tty.ask("Send? [a]ccept, [d]ecline, [c]ancel: ") else {
            tty.write("\n");
            return CreateElicitationResponse::cancel();
        };
        match line.trim().to_ascii_lowercase().as_str() {
            "a" | "accept" | "y" | "yes" => {
                return CreateElicitationResponse::accept(Some(content));
            }
            "d" | "decline" | "n" | "no" => return CreateElicitationResponse::decline(),
            "c" | "cancel" => return CreateElicitationResponse::cancel(),
            _ => {}
        }
    }
}

/// Asks whether to open `url`, which the agent sent with `message`:
/// `Some(true)` for yes, `Some(false)` for no (the default), `None` when
/// the input ends or the turn is cancelled.
pub fn ask_url(tty: &mut Tty, message: &str, url: &str, color: bool) -> Option<bool> {
    let style = Style::new(color);
    tty.write(&format!(
        "{} {}\n",
        style.yellow_bold("? The agent asks:"),
        printable(message)
    ));
    let question = format!("Open {} in your browser? [y/N] ", printable(url));
    loop {
        let Some(line) = tty.ask(&question) else {
            tty.write("\n");
            return None;
        };
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Some(true),
            "" | "n" | "no" => return Some(false),
            _ => {}
        }
    }
}

/// Why `url` must not be opened, or `None` if it may be: only http and
/// https links that name a host, without spaces or control characters.
pub fn refuse_link(url: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = url.split_once(':') else {
        return Some("it is not a link");
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return Some("acp opens only http and https links");
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("the link contains spaces or control characters");
    }
    match rest.strip_prefix("//") {
        Some(host) if !host.is_empty() && !host.starts_with(['/', '?', '#']) => None,
        _ => Some("the link names no host"),
    }
}

/// Starts a browser on `url` and does not wait for it: the program that
/// `BROWSER` names, else `open` on macOS and `xdg-open` elsewhere. The URL
/// is the program's only argument (no shell sees it); the program gets no
/// standard input or output, and a process group of its own, so a Ctrl-C
/// typed in the chat does not reach it. Returns the program's name, or
/// why it could not be started.
pub fn open_url(url: &str) -> Result<String, String> {
    let program = std::env::var_os("BROWSER")
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open".into()
            } else {
                "xdg-open".into()
            }
        });
    let name = program.to_string_lossy().into_owned();
    let mut command = Command::new(&program);
    command
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    match command.spawn() {
        Ok(mut child) => {
            // Reaped when it ends, whenever that is.
            std::thread::spawn(move || child.wait());
            Ok(name)
        }
        Err(e) => Err(format!("cannot start {name}: {e}")),
    }
}

/// `text` with control characters escaped (`\u{1b}`), so that what the
/// agent sent is shown as plain text and cannot drive the terminal.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The question for one property and its default answer.
fn describe(
    name: &str,
    property: &ElicitationPropertySchema,
    required: bool,
) -> (String, Option<ElicitationContentValue>) {
    let (title, description, kind, default): (
        Option<&String>,
        Option<&String>,
        String,
        Option<ElicitationContentValue>,
    ) = match property {
        ElicitationPropertySchema::String(s) => {
            let choices = choices(s);
            let kind = if choices.is_empty() {
                "text".to_owned()
            } else {
                format!("one of {}", choices.join(", "))
            };
            (
                s.title.as_ref(),
                s.description.as_ref(),
                kind,
                s.default_value.clone().map(Into::into),
            )
        }
        ElicitationPropertySchema::Number(s) => (
            s.title.as_ref(),
            s.description.as_ref(),
            "number".to_owned(),
            s.default_value.map(Into::into),
        ),
        ElicitationPropertySchema::Integer(s) => (
            s.title.as_ref(),
            s.description.as_ref(),
            "integer".to_owned(),
            s.default_value.map(Into::into),
        ),
        ElicitationPropertySchema::Boolean(s) => (
            s.title.as_ref(),
            s.description.as_ref(),
            "y/n".to_owned(),
            s.default_value.map(Into::into),
        ),
        ElicitationPropertySchema::Array(s) => {
            let values = multi_choices(&s.items);
            (
                s.title.as_ref(),
                s.description.as_ref(),
                format!("comma-separated, from {}", values.join(", ")),
                s.default_value.clone().map(Into::into),
            )
        }
        _ => (None, None, "text".to_owned(), None),
    };
    let mut question = title.cloned().unwrap_or_else(|| name.to_owned());
    if let Some(d) = description {
        question.push_str(&format!(" — {d}"));
    }
    question.push_str(&format!(" ({kind}"));
    if !required {
        question.push_str(", optional");
    }
    if let Some(d) = &default {
        question.push_str(&format!(
            ", default {}",
            serde_json::to_string(d).unwrap_or_default()
        ));
    }
    question.push(')');
    (question, default)
}

fn choices(s: &StringPropertySchema) -> Vec<String> {
    if let Some(values) = &s.enum_values {
        return values.clone();
    }
    s.one_of.iter().flatten().map(|o| o.value.clone()).collect()
}

fn multi_choices(items: &MultiSelectItems) -> Vec<String> {
    match items {
        MultiSelectItems::String(i) => i.enum_values.clone(),
        MultiSelectItems::Titled(i) => i.any_of.iter().map(|o| o.value.clone()).collect(),
        _ => Vec::new(),
    }
}

/// Reads one answer by the property's type.
pub fn parse(
    property: &ElicitationPropertySchema,
    text: &str,
) -> Result<ElicitationContentValue, String> {
    match property {
        ElicitationPropertySchema::String(s) => {
            let choices = choices(s);
            if choices.is_empty() || choices.iter().any(|c| c == text) {
                Ok(text.to_owned().into())
            } else {
                Err(format!("choose one of {}", choices.join(", ")))
            }
        }
        ElicitationPropertySchema::Number(_) => text
            .parse::<f64>()
            .map(Into::into)
            .map_err(|_| "a number, please".into()),
        ElicitationPropertySchema::Integer(_) => text
            .parse::<i64>()
            .map(Into::into)
            .map_err(|_| "a whole number, please".into()),
        ElicitationPropertySchema::Boolean(_) => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(true.into()),
            "n" | "no" | "false" => Ok(false.into()),
            _ => Err("y or n, please".into()),
        },
        ElicitationPropertySchema::Array(s) => {
            let allowed = multi_choices(&s.items);
            let picked: Vec<String> = text
                .split(',')
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect();
            match picked
                .iter()
                .find(|p| !allowed.is_empty() && !allowed.contains(p))
            {
                Some(bad) => Err(format!("{bad} is not one of {}", allowed.join(", "))),
                None => Ok(picked.into()),
            }
        }
        _ => Ok(text.to_owned().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_by_type() {
        let boolean = ElicitationPropertySchema::Boolean(BooleanPropertySchema::new());
        assert_eq!(parse(&boolean, "yes"), Ok(true.into()));
        assert!(parse(&boolean, "maybe").is_err());
        let integer = ElicitationPropertySchema::Integer(IntegerPropertySchema::new());
        assert_eq!(parse(&integer, "42"), Ok(42i64.into()));
        assert!(parse(&integer, "4.2").is_err());
        let text = ElicitationPropertySchema::String(StringPropertySchema::new());
        assert_eq!(parse(&text, "Ada"), Ok("Ada".into()));
    }

    #[test]
    fn only_http_and_https_links_are_opened() {
        assert_eq!(refuse_link("https://example.test/auth?x=1"), None);
        assert_eq!(refuse_link("HTTP://example.test"), None);
        let scheme = Some("acp opens only http and https links");
        assert_eq!(refuse_link("file:///etc/passwd"), scheme);
        assert_eq!(refuse_link("javascript:alert(1)"), scheme);
        assert_eq!(refuse_link("ftp://example.test"), scheme);
        assert_eq!(refuse_link("example.test"), Some("it is not a link"));
        let no_host = Some("the link names no host");
        assert_eq!(refuse_link("https:///etc/passwd"), no_host);
        assert_eq!(refuse_link("https:example.test"), no_host);
        let odd = Some("the link contains spaces or control characters");
        assert_eq!(refuse_link("https://example.test/a b"), odd);
        assert_eq!(refuse_link("https://example.test/\x1b[2J"), odd);
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(printable("a\x1b[31mb\n"), "a\\u{1b}[31mb\\n");
        assert_eq!(printable("plain – text"), "plain – text");
    }
}
