"""Writes the Word document ingest-core's .docx tests read (python-docx).

Usage: word-fixture.py OUT.docx (run by scripts/fetch-fixture.sh word, in
its venv). The document is made with python-docx's own template, so its
styles, numbering and table are the ones Word itself defines: a Title, two
levels of headings, bulleted (nested) and numbered lists, a table, a code
block in a code paragraph style, inline code in a monospaced font, a quote,
bold and italic runs, and core properties with another title.
"""

import sys

from docx import Document
from docx.enum.style import WD_STYLE_TYPE
from docx.shared import Pt

out = sys.argv[1]
doc = Document()
doc.core_properties.title = "Core properties title"

doc.add_heading("Shelf Operations Guide", level=0)

doc.add_heading("Installation", level=1)
p = doc.add_paragraph("Shelf indexes documentation. It is ")
p.add_run("fast").bold = True
p.add_run(" and ")
p.add_run("self-hosted").italic = True
p.add_run(".")

doc.add_paragraph("Download the release archive", style="List Bullet")
doc.add_paragraph("Check its checksum", style="List Bullet 2")
doc.add_paragraph("Unpack it anywhere", style="List Bullet")
doc.add_paragraph("Start the server", style="List Number")
doc.add_paragraph("Open the dashboard", style="List Number")

doc.add_heading("Configuration", level=2)
doc.add_paragraph("Every setting has a default:")
table = doc.add_table(rows=1, cols=3)
table.style = "Table Grid"
for cell, text in zip(table.rows[0].cells, ["Setting", "Default", "Meaning"]):
    cell.text = text
for row in [
    ("port", "8080", "Where the server listens"),
    ("data", "./data", "Where the index is stored"),
]:
    cells = table.add_row().cells
    for cell, text in zip(cells, row):
        cell.text = text

code = doc.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
code.base_style = doc.styles["Normal"]
code.font.name = "Courier New"
code.font.size = Pt(9)
doc.add_paragraph("shelf serve \\", style="Source Code")
doc.add_paragraph("    --port 8080 --data ./data", style="Source Code")

p = doc.add_paragraph("Then run ")
p.add_run("shelf ingest docs/").font.name = "Courier New"
p.add_run(" to index a folder.")

doc.add_heading("Troubleshooting", level=1)
doc.add_paragraph("A port in use stops the server at start.", style="Quote")
doc.add_paragraph("Pick another port with the setting above.")

doc.save(out)
