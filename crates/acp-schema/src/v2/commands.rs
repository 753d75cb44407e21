//! Slash commands in v2: a command and its input carry a `type`, so richer
//! kinds can be added later.

use crate::Meta;
use crate::util::{setters, tagged_union, wire_struct};

tagged_union! {
    /// A command the agent offers, tagged by `type`.
    pub enum AvailableCommand: tag "type" {
        /// A slash command the user can type.
        "command" => Command(Command),
    }
}

impl From<Command> for AvailableCommand {
    fn from(c: Command) -> Self {
        AvailableCommand::Command(c)
    }
}

wire_struct! {
    /// A slash command.
    pub struct Command {
        /// Its name, without the slash (`web`).
        pub name: String = "name" (Req),
        /// What it does.
        pub description: String = "description" (Req),
        /// What input it takes, if any.
        pub input: Option<AvailableCommandInput> = "input" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Command {
    /// The command `name`, doing `description`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Command {
            name: name.into(),
            description: description.into(),
            input: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Command { opt { input: AvailableCommandInput, meta: Meta } });

tagged_union! {
    /// What input a command takes, tagged by `type`. A client that does not know
    /// it may fall back to plain text input.
    pub enum AvailableCommandInput: tag "type" {
        /// Free text after the command, with a hint.
        "text" => Text(TextCommandInput),
    }
}

impl From<TextCommandInput> for AvailableCommandInput {
    fn from(i: TextCommandInput) -> Self {
        AvailableCommandInput::Text(i)
    }
}

wire_struct! {
    /// Free text input of a command.
    pub struct TextCommandInput {
        /// A hint shown while the input is empty.
        pub hint: String = "hint" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TextCommandInput {
    /// Text input with `hint`.
    pub fn new(hint: impl Into<String>) -> Self {
        TextCommandInput {
            hint: hint.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(TextCommandInput { opt { meta: Meta } });

wire_struct! {
    /// The complete list of commands the agent offers now.
    pub struct AvailableCommandsUpdate {
        /// The commands.
        pub available_commands: Vec<AvailableCommand> = "availableCommands" (ItemsReq),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AvailableCommandsUpdate {
    /// The commands `available_commands`.
    pub fn new(available_commands: Vec<AvailableCommand>) -> Self {
        AvailableCommandsUpdate {
            available_commands,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AvailableCommandsUpdate { opt { meta: Meta } });
