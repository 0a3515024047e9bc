"""Feed exporters for SpiTag's items (``FEED_EXPORTERS``: ``-O pages.xml``, ``-O pages.csv``).

A page's item holds what the page's markup holds: dictionaries keyed ``twitter:card``,
``og:title`` or ``@context``, text with control characters. Scrapy's XML exporter
makes each key an element name, and such a key (or character) is not allowed there:
the file it writes does not parse. Its CSV exporter writes a dictionary as Python's
``repr``, and a ``body`` column that is always empty (the store keeps the bodies, the
feed never sees them).

* XML: a key that is not a plain XML name becomes ``<field name="twitter:card">``;
  characters XML 1.0 forbids are dropped from text.
* CSV: dictionaries and lists of them are written as JSON; no ``body`` column unless
  ``FEED_EXPORT_FIELDS`` asks for it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from itemadapter import ItemAdapter
from scrapy.exporters import CsvItemExporter as ScrapyCsvItemExporter
from scrapy.exporters import XmlItemExporter as ScrapyXmlItemExporter
from xml.sax.xmlreader import AttributesImpl

# A name without a namespace prefix (XML 1.0 Name, no colon), ASCII-minded but open to letters of any script.
_XML_NAME = re.compile(r"^[^\W\d][\w.\-]*$")
# What XML 1.0 does not allow in a document, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
KEY_ELEMENT = "field"  # the element of a key that is not a name: <field name="og:title">


def xml_text(value: Any) -> str:
    return _NOT_XML.sub("", value if isinstance(value, str) else str(value))


class XmlItemExporter(ScrapyXmlItemExporter):
    def _export_xml_field(self, name: str, serialized_value: Any, depth: int) -> None:
        if _XML_NAME.match(name) and not name.lower().startswith("xml"):
            element, attributes = name, {}
        else:
            element, attributes = KEY_ELEMENT, {"name": xml_text(name)}
        self._beautify_indent(depth=depth)
        self.xg.startElement(element, AttributesImpl(attributes))
        if hasattr(serialized_value, "items"):
            self._beautify_newline()
            for subname, value in serialized_value.items():
                self._export_xml_field(str(subname), value, depth=depth + 1)
            self._beautify_indent(depth=depth)
        elif isinstance(serialized_value, (list, tuple)):
            self._beautify_newline()
            for value in serialized_value:
                self._export_xml_field("value", value, depth=depth + 1)
            self._beautify_indent(depth=depth)
        elif serialized_value is not None:
            self.xg.characters(xml_text(serialized_value))
        self.xg.endElement(element)
        self._beautify_newline()


class CsvItemExporter(ScrapyCsvItemExporter):
    def serialize_field(self, field: Any, name: str, value: Any) -> Any:
        if "serializer" not in field and (isinstance(value, dict) or _holds_dicts(value)):
            return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        return super().serialize_field(field, name, value)

    def _write_headers_and_set_fields_to_export(self, item: Any) -> None:
        if self.include_headers_line and not self.fields_to_export:
            self.fields_to_export = [name for name in ItemAdapter(item).field_names() if name != "body"]
        super()._write_headers_and_set_fields_to_export(item)


def _holds_dicts(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in value)
