import { keepPreviousData, queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { Schedule, ScheduleSpec } from "../../api/types";
import { backupKeys } from "../backups/queries";
import { destinationKeys } from "../destinations/queries";

export const scheduleKeys = {
  list: ["schedules"] as const,
  /** Prefix of every schedule's history. */
  allRuns: ["schedule-runs"] as const,
  runs: (id: number) => ["schedule-runs", id] as const,
  timetable: (cron: string, timezone: string) => ["schedule-timetable", cron, timezone] as const,
};

/** While a schedule runs its list entry (and history) is read often; otherwise now and then. */
const RUNNING_REFETCH_MS = 2_000;
const IDLE_REFETCH_MS = 30_000;
export const HISTORY_LIMIT = 50;

/** Admin only: every schedule, of this host's stacks and of agents' (`agent_id`). */
export function schedulesQueryOptions() {
  return queryOptions({
    queryKey: scheduleKeys.list,
    queryFn: () => unwrap(api.GET("/api/schedules")),
    refetchInterval: (query) => (query.state.data?.some((s) => s.running) ? RUNNING_REFETCH_MS : IDLE_REFETCH_MS),
  });
}

/** A schedule's runs, newest first: one entry per stack and run. */
export function scheduleRunsQueryOptions(id: number, running: boolean) {
  return queryOptions({
    queryKey: scheduleKeys.runs(id),
    queryFn: () =>
      unwrap(
        api.GET("/api/schedules/{schedule_id}/runs", {
          params: { path: { schedule_id: id }, query: { limit: HISTORY_LIMIT } },
        }),
      ),
    refetchInterval: running ? RUNNING_REFETCH_MS : false,
  });
}

/** What a timetable means: the expression (presets resolved) and its next five times; a 400 says why not. */
export function timetableQueryOptions(cron: string, timezone: string) {
  return queryOptions({
    queryKey: scheduleKeys.timetable(cron, timezone),
    queryFn: () => unwrap(api.GET("/api/timetable", { params: { query: { cron, timezone } } })),
    enabled: cron.trim() !== "" && timezone.trim() !== "",
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });
}

/** The spec of a schedule as shown (what a PUT sends back), its host (`agent_id`) included. */
export function specOf(schedule: Schedule): ScheduleSpec {
  const { id: _id, next_run_at: _next, last_run_at: _last, last_status: _status, running: _running, ...spec } = schedule;
  return { ...spec, agent_id: schedule.agent_id ?? null };
}

function invalidateSchedules(queryClient: QueryClient): Promise<unknown> {
  return queryClient.invalidateQueries({ queryKey: scheduleKeys.list });
}

export function useCreateSchedule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ScheduleSpec) => unwrap(api.POST("/api/schedules", { body })),
    onSettled: () => invalidateSchedules(queryClient),
  });
}

/** Replaces the whole spec (enabling and disabling too). */
export function useUpdateSchedule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, spec }: { id: number; spec: ScheduleSpec }) =>
      unwrap(api.PUT("/api/schedules/{schedule_id}", { params: { path: { schedule_id: id } }, body: spec })),
    onSettled: () => invalidateSchedules(queryClient),
  });
}

/** Forgets the schedule and its history; the archives it made stay. */
export function useDeleteSchedule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/schedules/{schedule_id}", { params: { path: { schedule_id: id } } })),
    onSuccess: (_data, id) => queryClient.removeQueries({ queryKey: scheduleKeys.runs(id) }),
    onSettled: () => invalidateSchedules(queryClient),
  });
}

/** Runs it now, out of its timetable; 409 while it runs. Its archives show up as it goes. */
export function useRunSchedule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/schedules/{schedule_id}/run", { params: { path: { schedule_id: id } } })),
    onSuccess: (view) =>
      queryClient.setQueryData<Schedule[]>(scheduleKeys.list, (old) => old?.map((s) => (s.id === view.id ? view : s))),
    onSettled: (_data, _error, id) =>
      Promise.all([
        invalidateSchedules(queryClient),
        queryClient.invalidateQueries({ queryKey: scheduleKeys.runs(id) }),
        // A schedule may back up an agent's stacks: every host's archives.
        queryClient.invalidateQueries({ queryKey: backupKeys.all }),
        queryClient.invalidateQueries({ queryKey: destinationKeys.allArchives }),
      ]),
  });
}
