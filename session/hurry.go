package session

import "context"

// hurryKey finds, in a run's context, the context whose end makes the run
// abandon its requests in flight instead of draining them.
type hurryKey struct{}

// WithHurry returns ctx carrying hurry: when hurry ends (a second stop
// signal, say), a run on ctx cuts its drain short, cancelling the requests
// in flight, while its summary and files are still written.
func WithHurry(ctx, hurry context.Context) context.Context {
	return context.WithValue(ctx, hurryKey{}, hurry)
}

// hurryContext is the context WithHurry put in ctx, or one never cancelled.
func hurryContext(ctx context.Context) context.Context {
	if h, ok := ctx.Value(hurryKey{}).(context.Context); ok {
		return h
	}
	return context.Background()
}
