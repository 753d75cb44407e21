//! `acp chat` answers `elicitation/create` (form mode) with a form on the
//! terminal: one question per property, then accept, decline or cancel.

use crate::style::Style;
use crate::tty::Tty;
use acp::schema::*;

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
}
