export { Scheduler, type ScheduledPipeline, type PipelineFolder, type SchedulerOptions, type BrokenFile } from './scheduler.js';
export { nightRunner, type NightTarget } from './night-runner.js';
export { ScheduleJournal, type ScheduleEvent, type ScheduleEventKind } from './schedule-journal.js';
export { readScheduleStatus, scheduleStatusFile, schedulerAlive, type ScheduleStatus } from './schedule-status.js';
