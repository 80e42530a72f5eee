"""The composition root: the one place a service's parts are made and put together, for
the app, its routers and the commands alike. `services`: what they are (typed);
`build`: how each is made, in dependency order; `start`: a start of the service, its
parts and then its background jobs."""
