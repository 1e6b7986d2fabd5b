package bench

import (
	"context"
	"strconv"
)

// usesRedis reports whether mode m sends Redis its work: every mode but
// the consume ceiling (a) and the PostgreSQL ceilings (l, m).
func usesRedis(m Mode) bool { return m != Consume && m != PGCeiling && m != PGInbox }

// redisCPU reads the CPU seconds Redis's main thread has used (INFO cpu:
// used_cpu_user_main_thread + used_cpu_sys_main_thread, Redis 6.2 and
// Valkey; the whole process's before them). Redis runs commands on that
// thread, so its time across a mode is what the mode cost Redis. ok is
// false when INFO is refused (an ACL) or carries neither: the figure is
// then left out.
func redisCPU(ctx context.Context, redisSpec string) (secs float64, ok bool) {
	rdb, err := NewRedis(redisSpec)
	if err != nil {
		return 0, false
	}
	defer rdb.Close()
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, false
	}
	return cpuSeconds(info)
}

// cpuSeconds sums the main thread's user and system seconds of an INFO cpu
// reply, or the process's when the main thread's are absent.
func cpuSeconds(info string) (float64, bool) {
	for _, pair := range [][2]string{{"used_cpu_user_main_thread", "used_cpu_sys_main_thread"}, {"used_cpu_user", "used_cpu_sys"}} {
		u, err1 := strconv.ParseFloat(infoField(info, pair[0]), 64)
		s, err2 := strconv.ParseFloat(infoField(info, pair[1]), 64)
		if err1 == nil && err2 == nil {
			return u + s, true
		}
	}
	return 0, false
}
