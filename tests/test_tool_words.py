"""A held tool call as the person is asked about it: the tool's own title and readable argument names, never the raw
tool name or argument keys in the German interface ('🔧 add_item (shop) / item: Milch' was shown: issue 52)."""
from __future__ import annotations

from mcp.types import Tool as McpTool
from mcp.types import ToolAnnotations

from bot.conversation.tools import argument_labels, call_summary, spelled
from bot.mcp.toolbox import shown_title
from bot.texts import t

SCHEMA = {"type": "object", "properties": {"item": {"type": "string", "title": "Item"},
                                           "due_date": {"type": "string"},
                                           "amount": {"type": "integer", "title": "Menge"}}}


def test_the_person_sees_a_tools_title_and_no_raw_keys() -> None:
    bare = McpTool(name="add_item", description="Add an item to the shopping list.\nMore words.", input_schema=SCHEMA)
    titled = McpTool(name="add_item", title="Auf die Einkaufsliste setzen", input_schema=SCHEMA)
    annotated = McpTool(name="add_item", input_schema=SCHEMA, annotations=ToolAnnotations(title="Add to list"))
    nameless = McpTool(name="addItem", input_schema=SCHEMA)
    assert [shown_title(x) for x in (bare, titled, annotated, nameless)] == [
        "Add an item to the shopping list", "Auf die Einkaufsliste setzen", "Add to list", "add item"]
    labels = argument_labels(SCHEMA)
    assert labels == {"amount": "Menge"}  # pydantic's "Item" for "item" only spells the key out
    arguments = {"item": "Milch", "amount": 2, "due_date": "morgen"}
    german = call_summary(arguments, labels, "de")
    assert german == "Milch, Menge: 2, morgen"
    assert call_summary(arguments, labels, "en") == "item: Milch, Menge: 2, due date: morgen"
    asked = t("de", "tool_question", tool=f"{shown_title(titled)} (shop)", args=f"\n{german}")
    assert asked == "Darf ich das ausführen? 🔧 Auf die Einkaufsliste setzen (shop)\nMilch, Menge: 2, morgen"
    assert not any(raw in asked for raw in ("add_item", "item:", "due_date", "amount"))
    assert spelled("set_alarm") == "set alarm" and spelled("postCard") == "post card"
