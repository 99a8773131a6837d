export { deliverSwarmEvent, runSwarmBridge, type SwarmEvent, seenNow, taskChanges } from './bridge.js';
export { claudeDir } from './files.js';
export { claimTask, completeTask, listTasks, type TeamTask } from './tasks.js';
export { joinTeam, listTeams, loadTeam, type TeamMember, type TeamSummary } from './team.js';
