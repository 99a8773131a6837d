/** A task file as Backlog.md writes one (front matter, then its Description section), status To Do. */
export function backlogTask(
  id: string,
  fields: {
    title?: string;
    priority?: string;
    dependencies?: string[];
    day?: number;
    description?: string;
  } = {},
): string {
  return `---
id: ${id}
title: ${fields.title ?? `Title of ${id}`}
status: To Do
assignee: []
created_date: '2026-12-0${fields.day ?? 1} 10:00'
labels: []
dependencies: [${(fields.dependencies ?? []).join(', ')}]
${fields.priority ? `priority: ${fields.priority}\n` : ''}---

## Description

${fields.description ?? `Do ${id}.`}
`;
}
