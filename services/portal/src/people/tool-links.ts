/** The navigation's links to the testing tools and the skill library (tools-pages.ts, library-pages.ts). */
export const TOOL_LINKS = '<a href="/portal/trace">Message trace</a><a href="/portal/library">Skill library</a>';
